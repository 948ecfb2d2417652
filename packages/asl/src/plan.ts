// What `fromAsl` records beside the stepfold definitions it makes: for each generated step the
// handler runs, which ASL state it evaluates and where that state's input comes from. The handlers
// (`aslHandlers`) read it; the definitions themselves stay plain stepfold JSON.

/** The query languages of ASL: JSONPath (`.$` fields and paths) and JSONata (`{% … %}`). */
export type QueryLanguage = 'JSONPath' | 'JSONata';

/** An ASL state as written. */
export type AslState = Readonly<Record<string, unknown>> & { readonly Type: string };

/** An ASL state machine, or a Parallel branch or Map iterator: `StartAt` and `States`. */
export interface AslMachine {
  readonly StartAt: string;
  readonly States: Readonly<Record<string, AslState>>;
  readonly Comment?: string;
  readonly QueryLanguage?: string;
  readonly Version?: string;
  readonly TimeoutSeconds?: number;
}

/**
 * Where a state's input comes from. Every generated step that evaluates a state writes its output
 * with a sequence number one past the highest it saw; a state's input is the value of the
 * highest-numbered output among its scope's `producers`, else the scope's entry.
 */
export interface AslScope {
  /** `top`: the execution; `branch`: a Parallel branch; `iteration`: a Map iteration's workflow. */
  kind: 'top' | 'branch' | 'iteration';
  /** Steps whose outputs carry the scope's current value. */
  producers: string[];
  /** For a branch: the Parallel's own step, whose output is the branch's input. */
  entry?: string | undefined;
}

/** A generated step the ASL handler runs (`jsonata`: its state uses JSONata). */
export type StepPlan = { jsonata?: boolean | undefined } & (
  | {
      /** Evaluates the state (a Map's or Parallel's first half: the input and the items). */
      role: 'state';
      /** The state's name as written. */
      name: string;
      state: AslState;
      scope: AslScope;
      /**
       * The step whose output says this run is a retry: a Task's `again` step, a Map's or
       * Parallel's `after` (a step's own output is hidden while it runs again).
       */
      decider: string;
    }
  | {
      /** Before a Task's retry: passes its failed attempt's output on, to where the next attempt reads it. */
      role: 'again';
      name: string;
      state: AslState;
      scope: AslScope;
      /** The Task's step. */
      of: string;
    }
  | {
      /** A Map's or Parallel's second half: gathers the results, then ResultSelector and on. */
      role: 'after';
      name: string;
      state: AslState;
      scope: AslScope;
      /** The state's first step, which holds the raw input. */
      first: string;
      /** Map: the map step whose output is the iterations' results. */
      map?: string | undefined;
      /** Parallel: each branch's scope, in order. */
      branches?: AslScope[] | undefined;
    }
);

/** The plan of an import: one entry per generated step the handler runs, by step id. */
export type AslPlan = Readonly<Record<string, StepPlan>>;

/** The one handler name every generated step uses. */
export const ASL_HANDLER = 'asl.state';
