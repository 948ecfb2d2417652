import { type HandlerContext, type StepOutputsOf, type, workflow } from '@stepfold/engine';
import { expect, expectTypeOf, it } from 'vitest';

// A long typed workflow compiles: the builder's types stay flat as steps are added (a state that
// nests one instantiation per step fails with TS2589, "excessively deep", at about 30 steps).
// Checked by tsc (`pnpm typecheck`); vitest runs it as a plain test.
const handlers = {
  h0: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 0,
    label: `${input.label}-0`,
    at: new Date(),
  }),
  h1: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 1,
    label: `${input.label}-1`,
    at: new Date(),
  }),
  h2: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 2,
    label: `${input.label}-2`,
    at: new Date(),
  }),
  h3: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 3,
    label: `${input.label}-3`,
    at: new Date(),
  }),
  h4: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 4,
    label: `${input.label}-4`,
    at: new Date(),
  }),
  h5: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 5,
    label: `${input.label}-5`,
    at: new Date(),
  }),
  h6: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 6,
    label: `${input.label}-6`,
    at: new Date(),
  }),
  h7: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 7,
    label: `${input.label}-7`,
    at: new Date(),
  }),
  h8: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 8,
    label: `${input.label}-8`,
    at: new Date(),
  }),
  h9: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 9,
    label: `${input.label}-9`,
    at: new Date(),
  }),
  h10: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 10,
    label: `${input.label}-10`,
    at: new Date(),
  }),
  h11: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 11,
    label: `${input.label}-11`,
    at: new Date(),
  }),
  h12: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 12,
    label: `${input.label}-12`,
    at: new Date(),
  }),
  h13: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 13,
    label: `${input.label}-13`,
    at: new Date(),
  }),
  h14: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 14,
    label: `${input.label}-14`,
    at: new Date(),
  }),
  h15: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 15,
    label: `${input.label}-15`,
    at: new Date(),
  }),
  h16: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 16,
    label: `${input.label}-16`,
    at: new Date(),
  }),
  h17: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 17,
    label: `${input.label}-17`,
    at: new Date(),
  }),
  h18: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 18,
    label: `${input.label}-18`,
    at: new Date(),
  }),
  h19: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 19,
    label: `${input.label}-19`,
    at: new Date(),
  }),
  h20: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 20,
    label: `${input.label}-20`,
    at: new Date(),
  }),
  h21: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 21,
    label: `${input.label}-21`,
    at: new Date(),
  }),
  h22: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 22,
    label: `${input.label}-22`,
    at: new Date(),
  }),
  h23: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 23,
    label: `${input.label}-23`,
    at: new Date(),
  }),
  h24: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 24,
    label: `${input.label}-24`,
    at: new Date(),
  }),
  h25: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 25,
    label: `${input.label}-25`,
    at: new Date(),
  }),
  h26: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 26,
    label: `${input.label}-26`,
    at: new Date(),
  }),
  h27: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 27,
    label: `${input.label}-27`,
    at: new Date(),
  }),
  h28: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 28,
    label: `${input.label}-28`,
    at: new Date(),
  }),
  h29: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 29,
    label: `${input.label}-29`,
    at: new Date(),
  }),
  h30: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 30,
    label: `${input.label}-30`,
    at: new Date(),
  }),
  h31: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 31,
    label: `${input.label}-31`,
    at: new Date(),
  }),
  h32: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 32,
    label: `${input.label}-32`,
    at: new Date(),
  }),
  h33: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 33,
    label: `${input.label}-33`,
    at: new Date(),
  }),
  h34: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 34,
    label: `${input.label}-34`,
    at: new Date(),
  }),
  h35: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 35,
    label: `${input.label}-35`,
    at: new Date(),
  }),
  h36: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 36,
    label: `${input.label}-36`,
    at: new Date(),
  }),
  h37: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 37,
    label: `${input.label}-37`,
    at: new Date(),
  }),
  h38: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 38,
    label: `${input.label}-38`,
    at: new Date(),
  }),
  h39: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 39,
    label: `${input.label}-39`,
    at: new Date(),
  }),
  h40: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 40,
    label: `${input.label}-40`,
    at: new Date(),
  }),
  h41: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 41,
    label: `${input.label}-41`,
    at: new Date(),
  }),
  h42: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 42,
    label: `${input.label}-42`,
    at: new Date(),
  }),
  h43: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 43,
    label: `${input.label}-43`,
    at: new Date(),
  }),
  h44: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 44,
    label: `${input.label}-44`,
    at: new Date(),
  }),
  h45: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 45,
    label: `${input.label}-45`,
    at: new Date(),
  }),
  h46: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 46,
    label: `${input.label}-46`,
    at: new Date(),
  }),
  h47: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 47,
    label: `${input.label}-47`,
    at: new Date(),
  }),
  h48: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 48,
    label: `${input.label}-48`,
    at: new Date(),
  }),
  h49: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 49,
    label: `${input.label}-49`,
    at: new Date(),
  }),
  h50: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 50,
    label: `${input.label}-50`,
    at: new Date(),
  }),
  h51: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 51,
    label: `${input.label}-51`,
    at: new Date(),
  }),
  h52: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 52,
    label: `${input.label}-52`,
    at: new Date(),
  }),
  h53: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 53,
    label: `${input.label}-53`,
    at: new Date(),
  }),
  h54: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 54,
    label: `${input.label}-54`,
    at: new Date(),
  }),
  h55: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 55,
    label: `${input.label}-55`,
    at: new Date(),
  }),
  h56: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 56,
    label: `${input.label}-56`,
    at: new Date(),
  }),
  h57: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 57,
    label: `${input.label}-57`,
    at: new Date(),
  }),
  h58: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 58,
    label: `${input.label}-58`,
    at: new Date(),
  }),
  h59: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 59,
    label: `${input.label}-59`,
    at: new Date(),
  }),
  h60: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 60,
    label: `${input.label}-60`,
    at: new Date(),
  }),
  h61: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 61,
    label: `${input.label}-61`,
    at: new Date(),
  }),
  h62: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 62,
    label: `${input.label}-62`,
    at: new Date(),
  }),
  h63: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 63,
    label: `${input.label}-63`,
    at: new Date(),
  }),
  h64: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 64,
    label: `${input.label}-64`,
    at: new Date(),
  }),
  h65: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 65,
    label: `${input.label}-65`,
    at: new Date(),
  }),
  h66: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 66,
    label: `${input.label}-66`,
    at: new Date(),
  }),
  h67: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 67,
    label: `${input.label}-67`,
    at: new Date(),
  }),
  h68: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 68,
    label: `${input.label}-68`,
    at: new Date(),
  }),
  h69: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 69,
    label: `${input.label}-69`,
    at: new Date(),
  }),
  h70: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 70,
    label: `${input.label}-70`,
    at: new Date(),
  }),
  h71: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 71,
    label: `${input.label}-71`,
    at: new Date(),
  }),
  h72: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 72,
    label: `${input.label}-72`,
    at: new Date(),
  }),
  h73: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 73,
    label: `${input.label}-73`,
    at: new Date(),
  }),
  h74: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 74,
    label: `${input.label}-74`,
    at: new Date(),
  }),
  h75: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 75,
    label: `${input.label}-75`,
    at: new Date(),
  }),
  h76: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 76,
    label: `${input.label}-76`,
    at: new Date(),
  }),
  h77: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 77,
    label: `${input.label}-77`,
    at: new Date(),
  }),
  h78: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 78,
    label: `${input.label}-78`,
    at: new Date(),
  }),
  h79: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 79,
    label: `${input.label}-79`,
    at: new Date(),
  }),
  h80: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 80,
    label: `${input.label}-80`,
    at: new Date(),
  }),
  h81: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 81,
    label: `${input.label}-81`,
    at: new Date(),
  }),
  h82: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 82,
    label: `${input.label}-82`,
    at: new Date(),
  }),
  h83: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 83,
    label: `${input.label}-83`,
    at: new Date(),
  }),
  h84: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 84,
    label: `${input.label}-84`,
    at: new Date(),
  }),
  h85: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 85,
    label: `${input.label}-85`,
    at: new Date(),
  }),
  h86: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 86,
    label: `${input.label}-86`,
    at: new Date(),
  }),
  h87: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 87,
    label: `${input.label}-87`,
    at: new Date(),
  }),
  h88: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 88,
    label: `${input.label}-88`,
    at: new Date(),
  }),
  h89: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 89,
    label: `${input.label}-89`,
    at: new Date(),
  }),
  h90: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 90,
    label: `${input.label}-90`,
    at: new Date(),
  }),
  h91: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 91,
    label: `${input.label}-91`,
    at: new Date(),
  }),
  h92: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 92,
    label: `${input.label}-92`,
    at: new Date(),
  }),
  h93: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 93,
    label: `${input.label}-93`,
    at: new Date(),
  }),
  h94: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 94,
    label: `${input.label}-94`,
    at: new Date(),
  }),
  h95: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 95,
    label: `${input.label}-95`,
    at: new Date(),
  }),
  h96: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 96,
    label: `${input.label}-96`,
    at: new Date(),
  }),
  h97: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 97,
    label: `${input.label}-97`,
    at: new Date(),
  }),
  h98: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 98,
    label: `${input.label}-98`,
    at: new Date(),
  }),
  h99: async ({ input }: HandlerContext<{ value: number; label: string }>) => ({
    value: input.value + 99,
    label: `${input.label}-99`,
    at: new Date(),
  }),
};
const wf = workflow('typed', 1)
  .handlers<typeof handlers>()
  .input(type<{ amount: number; name: string }>())
  .task('s0', { handler: 'h0', input: { value: 'input.amount', label: 'input.name' } })
  .task('s1', { handler: 'h1', input: { value: 'outputs.s0.value', label: 'outputs.s0.label' } })
  .task('s2', { handler: 'h2', input: { value: 'outputs.s1.value', label: 'outputs.s1.label' } })
  .task('s3', { handler: 'h3', input: { value: 'outputs.s2.value', label: 'outputs.s2.label' } })
  .task('s4', { handler: 'h4', input: { value: 'outputs.s3.value', label: 'outputs.s3.label' } })
  .task('s5', { handler: 'h5', input: { value: 'outputs.s4.value', label: 'outputs.s4.label' } })
  .task('s6', { handler: 'h6', input: { value: 'outputs.s5.value', label: 'outputs.s5.label' } })
  .task('s7', { handler: 'h7', input: { value: 'outputs.s6.value', label: 'outputs.s6.label' } })
  .task('s8', { handler: 'h8', input: { value: 'outputs.s7.value', label: 'outputs.s7.label' } })
  .task('s9', { handler: 'h9', input: { value: 'outputs.s8.value', label: 'outputs.s8.label' } })
  .task('s10', { handler: 'h10', input: { value: 'outputs.s9.value', label: 'outputs.s9.label' } })
  .task('s11', { handler: 'h11', input: { value: 'outputs.s10.value', label: 'outputs.s10.label' } })
  .task('s12', { handler: 'h12', input: { value: 'outputs.s11.value', label: 'outputs.s11.label' } })
  .task('s13', { handler: 'h13', input: { value: 'outputs.s12.value', label: 'outputs.s12.label' } })
  .task('s14', { handler: 'h14', input: { value: 'outputs.s13.value', label: 'outputs.s13.label' } })
  .task('s15', { handler: 'h15', input: { value: 'outputs.s14.value', label: 'outputs.s14.label' } })
  .task('s16', { handler: 'h16', input: { value: 'outputs.s15.value', label: 'outputs.s15.label' } })
  .task('s17', { handler: 'h17', input: { value: 'outputs.s16.value', label: 'outputs.s16.label' } })
  .task('s18', { handler: 'h18', input: { value: 'outputs.s17.value', label: 'outputs.s17.label' } })
  .task('s19', { handler: 'h19', input: { value: 'outputs.s18.value', label: 'outputs.s18.label' } })
  .task('s20', { handler: 'h20', input: { value: 'outputs.s19.value', label: 'outputs.s19.label' } })
  .task('s21', { handler: 'h21', input: { value: 'outputs.s20.value', label: 'outputs.s20.label' } })
  .task('s22', { handler: 'h22', input: { value: 'outputs.s21.value', label: 'outputs.s21.label' } })
  .task('s23', { handler: 'h23', input: { value: 'outputs.s22.value', label: 'outputs.s22.label' } })
  .task('s24', { handler: 'h24', input: { value: 'outputs.s23.value', label: 'outputs.s23.label' } })
  .task('s25', { handler: 'h25', input: { value: 'outputs.s24.value', label: 'outputs.s24.label' } })
  .task('s26', { handler: 'h26', input: { value: 'outputs.s25.value', label: 'outputs.s25.label' } })
  .task('s27', { handler: 'h27', input: { value: 'outputs.s26.value', label: 'outputs.s26.label' } })
  .task('s28', { handler: 'h28', input: { value: 'outputs.s27.value', label: 'outputs.s27.label' } })
  .task('s29', { handler: 'h29', input: { value: 'outputs.s28.value', label: 'outputs.s28.label' } })
  .task('s30', { handler: 'h30', input: { value: 'outputs.s29.value', label: 'outputs.s29.label' } })
  .task('s31', { handler: 'h31', input: { value: 'outputs.s30.value', label: 'outputs.s30.label' } })
  .task('s32', { handler: 'h32', input: { value: 'outputs.s31.value', label: 'outputs.s31.label' } })
  .task('s33', { handler: 'h33', input: { value: 'outputs.s32.value', label: 'outputs.s32.label' } })
  .task('s34', { handler: 'h34', input: { value: 'outputs.s33.value', label: 'outputs.s33.label' } })
  .task('s35', { handler: 'h35', input: { value: 'outputs.s34.value', label: 'outputs.s34.label' } })
  .task('s36', { handler: 'h36', input: { value: 'outputs.s35.value', label: 'outputs.s35.label' } })
  .task('s37', { handler: 'h37', input: { value: 'outputs.s36.value', label: 'outputs.s36.label' } })
  .task('s38', { handler: 'h38', input: { value: 'outputs.s37.value', label: 'outputs.s37.label' } })
  .task('s39', { handler: 'h39', input: { value: 'outputs.s38.value', label: 'outputs.s38.label' } })
  .task('s40', { handler: 'h40', input: { value: 'outputs.s39.value', label: 'outputs.s39.label' } })
  .task('s41', { handler: 'h41', input: { value: 'outputs.s40.value', label: 'outputs.s40.label' } })
  .task('s42', { handler: 'h42', input: { value: 'outputs.s41.value', label: 'outputs.s41.label' } })
  .task('s43', { handler: 'h43', input: { value: 'outputs.s42.value', label: 'outputs.s42.label' } })
  .task('s44', { handler: 'h44', input: { value: 'outputs.s43.value', label: 'outputs.s43.label' } })
  .task('s45', { handler: 'h45', input: { value: 'outputs.s44.value', label: 'outputs.s44.label' } })
  .task('s46', { handler: 'h46', input: { value: 'outputs.s45.value', label: 'outputs.s45.label' } })
  .task('s47', { handler: 'h47', input: { value: 'outputs.s46.value', label: 'outputs.s46.label' } })
  .task('s48', { handler: 'h48', input: { value: 'outputs.s47.value', label: 'outputs.s47.label' } })
  .task('s49', { handler: 'h49', input: { value: 'outputs.s48.value', label: 'outputs.s48.label' } })
  .task('s50', { handler: 'h50', input: { value: 'outputs.s49.value', label: 'outputs.s49.label' } })
  .task('s51', { handler: 'h51', input: { value: 'outputs.s50.value', label: 'outputs.s50.label' } })
  .task('s52', { handler: 'h52', input: { value: 'outputs.s51.value', label: 'outputs.s51.label' } })
  .task('s53', { handler: 'h53', input: { value: 'outputs.s52.value', label: 'outputs.s52.label' } })
  .task('s54', { handler: 'h54', input: { value: 'outputs.s53.value', label: 'outputs.s53.label' } })
  .task('s55', { handler: 'h55', input: { value: 'outputs.s54.value', label: 'outputs.s54.label' } })
  .task('s56', { handler: 'h56', input: { value: 'outputs.s55.value', label: 'outputs.s55.label' } })
  .task('s57', { handler: 'h57', input: { value: 'outputs.s56.value', label: 'outputs.s56.label' } })
  .task('s58', { handler: 'h58', input: { value: 'outputs.s57.value', label: 'outputs.s57.label' } })
  .task('s59', { handler: 'h59', input: { value: 'outputs.s58.value', label: 'outputs.s58.label' } })
  .task('s60', { handler: 'h60', input: { value: 'outputs.s59.value', label: 'outputs.s59.label' } })
  .task('s61', { handler: 'h61', input: { value: 'outputs.s60.value', label: 'outputs.s60.label' } })
  .task('s62', { handler: 'h62', input: { value: 'outputs.s61.value', label: 'outputs.s61.label' } })
  .task('s63', { handler: 'h63', input: { value: 'outputs.s62.value', label: 'outputs.s62.label' } })
  .task('s64', { handler: 'h64', input: { value: 'outputs.s63.value', label: 'outputs.s63.label' } })
  .task('s65', { handler: 'h65', input: { value: 'outputs.s64.value', label: 'outputs.s64.label' } })
  .task('s66', { handler: 'h66', input: { value: 'outputs.s65.value', label: 'outputs.s65.label' } })
  .task('s67', { handler: 'h67', input: { value: 'outputs.s66.value', label: 'outputs.s66.label' } })
  .task('s68', { handler: 'h68', input: { value: 'outputs.s67.value', label: 'outputs.s67.label' } })
  .task('s69', { handler: 'h69', input: { value: 'outputs.s68.value', label: 'outputs.s68.label' } })
  .task('s70', { handler: 'h70', input: { value: 'outputs.s69.value', label: 'outputs.s69.label' } })
  .task('s71', { handler: 'h71', input: { value: 'outputs.s70.value', label: 'outputs.s70.label' } })
  .task('s72', { handler: 'h72', input: { value: 'outputs.s71.value', label: 'outputs.s71.label' } })
  .task('s73', { handler: 'h73', input: { value: 'outputs.s72.value', label: 'outputs.s72.label' } })
  .task('s74', { handler: 'h74', input: { value: 'outputs.s73.value', label: 'outputs.s73.label' } })
  .task('s75', { handler: 'h75', input: { value: 'outputs.s74.value', label: 'outputs.s74.label' } })
  .task('s76', { handler: 'h76', input: { value: 'outputs.s75.value', label: 'outputs.s75.label' } })
  .task('s77', { handler: 'h77', input: { value: 'outputs.s76.value', label: 'outputs.s76.label' } })
  .task('s78', { handler: 'h78', input: { value: 'outputs.s77.value', label: 'outputs.s77.label' } })
  .task('s79', { handler: 'h79', input: { value: 'outputs.s78.value', label: 'outputs.s78.label' } })
  .task('s80', { handler: 'h80', input: { value: 'outputs.s79.value', label: 'outputs.s79.label' } })
  .task('s81', { handler: 'h81', input: { value: 'outputs.s80.value', label: 'outputs.s80.label' } })
  .task('s82', { handler: 'h82', input: { value: 'outputs.s81.value', label: 'outputs.s81.label' } })
  .task('s83', { handler: 'h83', input: { value: 'outputs.s82.value', label: 'outputs.s82.label' } })
  .task('s84', { handler: 'h84', input: { value: 'outputs.s83.value', label: 'outputs.s83.label' } })
  .task('s85', { handler: 'h85', input: { value: 'outputs.s84.value', label: 'outputs.s84.label' } })
  .task('s86', { handler: 'h86', input: { value: 'outputs.s85.value', label: 'outputs.s85.label' } })
  .task('s87', { handler: 'h87', input: { value: 'outputs.s86.value', label: 'outputs.s86.label' } })
  .task('s88', { handler: 'h88', input: { value: 'outputs.s87.value', label: 'outputs.s87.label' } })
  .task('s89', { handler: 'h89', input: { value: 'outputs.s88.value', label: 'outputs.s88.label' } })
  .task('s90', { handler: 'h90', input: { value: 'outputs.s89.value', label: 'outputs.s89.label' } })
  .task('s91', { handler: 'h91', input: { value: 'outputs.s90.value', label: 'outputs.s90.label' } })
  .task('s92', { handler: 'h92', input: { value: 'outputs.s91.value', label: 'outputs.s91.label' } })
  .task('s93', { handler: 'h93', input: { value: 'outputs.s92.value', label: 'outputs.s92.label' } })
  .task('s94', { handler: 'h94', input: { value: 'outputs.s93.value', label: 'outputs.s93.label' } })
  .task('s95', { handler: 'h95', input: { value: 'outputs.s94.value', label: 'outputs.s94.label' } })
  .task('s96', { handler: 'h96', input: { value: 'outputs.s95.value', label: 'outputs.s95.label' } })
  .task('s97', { handler: 'h97', input: { value: 'outputs.s96.value', label: 'outputs.s96.label' } })
  .task('s98', { handler: 'h98', input: { value: 'outputs.s97.value', label: 'outputs.s97.label' } })
  .task('s99', { handler: 'h99', input: { value: 'outputs.s98.value', label: 'outputs.s98.label' } })
  .build();
type Last = StepOutputsOf<typeof wf>['s99'];

it('a 100-step typed workflow compiles and types its last output', () => {
  expectTypeOf<Last>().toEqualTypeOf<{ value: number; label: string; at: string }>();
  expect(wf.steps['s99']?.kind).toBe('task');
});
