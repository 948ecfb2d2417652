import { LAMBDA_INVOKE } from './checks.js';
import { AslRuntimeError } from './errors.js';

// Task states call Lambda functions: a function ARN as `Resource` (the function gets the state's
// effective input and its return is the result) or the `lambda:invoke` integration (the resolved
// Parameters name the function and carry its Payload; the result is the integration's response).

/** One Lambda call a Task state makes. */
export interface LambdaCall {
  /** The Task state's name. */
  state: string;
  /** `lambda-arn`: `Resource` is the function's ARN; `lambda-invoke`: the `lambda:invoke` integration. */
  kind: 'lambda-arn' | 'lambda-invoke';
  /** The state's `Resource` as written. */
  resource: string;
  /** The function's ARN or name (`Parameters.FunctionName` for `lambda:invoke`). */
  functionName: string;
  /** What the call sends: the effective input (`lambda-arn`), the resolved Parameters (`lambda-invoke`). */
  input: unknown;
}

/**
 * A Lambda function as the handlers call it: returns its result, or throws an
 * {@link AslRuntimeError} (its error name and cause as AWS reports them) or any error (reported as
 * a Lambda function error: its `name` as the error, `{ errorMessage, errorType }` as the cause).
 */
export type LambdaFunction = (payload: unknown, call: LambdaCall) => unknown;

/** Functions by ARN or name, or a function that finds the one for a call. */
export type ResourceMap =
  | Readonly<Record<string, LambdaFunction>>
  | ((call: LambdaCall) => LambdaFunction | undefined);

/** The name part of a function ARN (`arn:…:function:<name>[:<qualifier>]`), or the name as given. */
export function functionNameOf(arnOrName: string): string {
  const parts = arnOrName.split(':');
  return parts[0] === 'arn' && parts[5] === 'function' ? (parts[6] ?? arnOrName) : arnOrName;
}

/** The Lambda call a Task state makes with its effective `input`. */
export function lambdaCall(state: string, resource: string, input: unknown): LambdaCall {
  if (resource === LAMBDA_INVOKE) {
    const name = String((input as { FunctionName?: unknown } | null)?.FunctionName ?? '');
    return { state, kind: 'lambda-invoke', resource, functionName: name, input };
  }
  return { state, kind: 'lambda-arn', resource, functionName: resource, input };
}

function find(resources: ResourceMap, call: LambdaCall): LambdaFunction | undefined {
  if (typeof resources === 'function') return resources(call);
  const byName = functionNameOf(call.functionName);
  for (const key of [call.functionName, byName]) if (Object.hasOwn(resources, key)) return resources[key];
  return undefined;
}

/** Calls the function behind a Task state; resolves with the result or throws an {@link AslRuntimeError}. */
export async function invokeTask(
  call: LambdaCall,
  options: { resources: ResourceMap; invoke?: 'payload' | 'envelope' | undefined },
): Promise<unknown> {
  const fn = find(options.resources, call);
  if (!fn)
    throw new AslRuntimeError('Lambda.ResourceNotFoundException', `Function not found: ${call.functionName}`);
  const envelope = call.kind === 'lambda-invoke' && options.invoke === 'envelope';
  const payload =
    call.kind === 'lambda-invoke' && !envelope ? (call.input as { Payload?: unknown }).Payload : call.input;
  let result: unknown;
  try {
    result = await fn(payload, call);
  } catch (e) {
    if (e instanceof AslRuntimeError) throw e;
    const err = e instanceof Error ? e : new Error(String(e));
    const cause = { errorMessage: err.message, errorType: err.name };
    throw new AslRuntimeError(
      err.name,
      call.kind === 'lambda-invoke' ? JSON.stringify(cause) : pythonJson(cause),
    );
  }
  if (call.kind === 'lambda-invoke' && !envelope)
    return { ExecutedVersion: '$LATEST', Payload: result ?? null, StatusCode: 200 };
  return result ?? null;
}

/** JSON with a space after `:` and `,`, as a Python runtime writes a function error. */
function pythonJson(v: Record<string, string>): string {
  return `{${Object.entries(v)
    .map(([k, x]) => `${JSON.stringify(k)}: ${JSON.stringify(x)}`)
    .join(', ')}}`;
}
