/**
 * Seller registration with forward recovery. Saving the form is the pivot: once it is done, the
 * registration must go through, so later failures retry and then wait in `dlq` for an operator
 * instead of rolling back. The security service fails its first 5 calls; with 3 attempts the
 * instance parks in `dlq`, and a `requeue` gives the step fresh attempts until it completes.
 * Exits non-zero if the outcome is anything else.
 */
import {
  createMemoryStore,
  createRunner,
  defineHooks,
  isTerminal,
  type Runner,
  type Snapshot,
  type Status,
  TaskError,
  workflow,
} from '@stepfold/engine';

export const sellerRegistration = workflow('seller-registration', 1, {
  defaults: { retry: { maxAttempts: 3, initialMs: 500, factor: 2, maxMs: 5_000, jitter: 0.1 } },
})
  .task('save-form', { handler: 'saveForm', compensate: 'deleteForm', pivot: true })
  .task('create-company', { handler: 'createCompany', compensate: 'deleteCompany' })
  .task('attach-user', { handler: 'attachUser', compensate: 'detachUser' })
  .task('security-check', { handler: 'securityCheck' })
  .task('notify', { handler: 'notifySeller' })
  .build();

/** What the example did: statuses along the way and every handler call. */
export interface SellerRegistrationResult {
  status: Status;
  /** Status before the operator's requeue (expected `dlq`). */
  parkedStatus: Status;
  snapshot: Snapshot;
  calls: string[];
}

/** Advances a simulated clock through retry backoffs until the instance stops moving. */
async function settle(runner: Runner, id: string, clock: { now: number }): Promise<Snapshot> {
  let s = (await runner.get(id))!;
  while (!isTerminal(s.status) && s.status !== 'dlq' && s.wakeAt !== null) {
    clock.now = s.wakeAt;
    await runner.processDue(clock.now);
    s = (await runner.get(id))!;
  }
  return s;
}

/** Runs the registration, the operator's requeue, and returns the outcome; `print` gets each line. */
export async function main(print: (line: string) => void = console.log): Promise<SellerRegistrationResult> {
  const clock = { now: Date.UTC(2026, 10, 22, 9, 0, 0) };
  const calls: string[] = [];
  let securityCalls = 0;
  const call = (name: string, output: unknown) => () => {
    calls.push(name);
    return output;
  };

  const runner = createRunner({
    store: createMemoryStore(),
    workflows: [sellerRegistration],
    clock: () => clock.now,
    handlers: {
      saveForm: call('saveForm', { formId: 'F-1' }),
      deleteForm: call('deleteForm', null),
      createCompany: call('createCompany', { companyId: 'C-1' }),
      deleteCompany: call('deleteCompany', null),
      attachUser: call('attachUser', { userId: 'U-1' }),
      detachUser: call('detachUser', null),
      notifySeller: call('notifySeller', { sent: true }),
      securityCheck: ({ attempt, idempotencyKey }) => {
        securityCalls++;
        calls.push(`securityCheck#${attempt}`);
        if (securityCalls <= 5) {
          throw new TaskError(`security service unavailable (key ${idempotencyKey})`, {
            code: 'UNAVAILABLE',
          });
        }
        return { cleared: true };
      },
    },
    hooks: defineHooks({
      onTransition: (e) => print(`v${e.v}  ${e.type.padEnd(26)} ${e.step ?? ''} ${e.detail ?? ''}`.trimEnd()),
    }),
  });

  await runner.start('seller-registration', 'seller-1', { email: 'shop@example.com' });
  const parked = await settle(runner, 'seller-1', clock);
  print(`\nparked: ${parked.status} at ${parked.error?.step} (${parked.error?.code}); operator requeues\n`);
  await runner.requeue('seller-1');
  const s = await settle(runner, 'seller-1', clock);
  print(`\nstatus: ${s.status}; security check calls: ${securityCalls}`);
  print(`calls: ${calls.join(' → ')}`);
  return { status: s.status, parkedStatus: parked.status, snapshot: s, calls };
}

/** The outcome this example promises. */
export function isExpected(r: SellerRegistrationResult): boolean {
  const undo = ['deleteForm', 'deleteCompany', 'detachUser'];
  return (
    r.parkedStatus === 'dlq' &&
    r.status === 'completed' &&
    r.calls.filter((c) => c.startsWith('securityCheck')).length === 6 &&
    r.calls.includes('notifySeller') &&
    !r.calls.some((c) => undo.includes(c))
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = await main();
  process.exit(isExpected(r) ? 0 : 1);
}
