/**
 * CEL for admission policies — the one seam over the CEL library (@marcbachmann/cel-js): compile
 * an expression once against the variables a policy may read, evaluate it per request. Upstream:
 * k8s.io/apiserver pkg/admission/plugin/cel/compile.go (CompileCELExpression), activation.go
 * (the per-request variables) and composition.go (`variables.<name>`), over cel-go.
 *
 * Solves:
 * - an expression is parsed and type-checked when the policy is created (its mistakes are the
 *   author's field errors) and again when the plugin first sees the policy, never per request;
 * - every expression sees the same names upstream declares: `object`, `oldObject`, `request`,
 *   `namespaceObject`, `variables`, and `params` only when the policy has a paramKind (without
 *   one, `params` is an undeclared reference — a compile error, as upstream);
 * - `variables.x` is evaluated lazily and at most once per request, whichever expressions read it
 *   (upstream's composition cache), so an expensive variable costs once.
 *
 * Invariants:
 * - compile errors read `compilation failed: ERROR: <input>:L:C: <what>`, upstream's shape
 *   (the words after the position are the library's, not cel-go's);
 * - a validation must type to bool, a messageExpression to string, or to `dyn` (not known until
 *   run time, as every field of an object here: see "What upstream does differently");
 * - an evaluation error is a CELEvaluationError reading `expression '<e>' resulted in error: <why>`.
 *
 * What upstream does differently: cel-go type-checks `object.spec.replicas` against the matched
 * kind's OpenAPI schema (a typo in a field name fails at create, and warnings land in
 * `status.typeChecking`); here objects are `dyn`. Upstream also meters a cost budget per
 * expression and per request, and adds Kubernetes' CEL libraries (quantity, url, ip, cidr,
 * regex `find`, `lists`, `strings` extensions, `format`, the `authorizer` variable); none exist here.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/cel/compile.go (compiler.CompileCELExpression, ObjectVarName, OldObjectVarName, ParamsVarName, RequestVarName, NamespaceVarName, VariableVarName)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/cel/activation.go (evaluationActivation, CreateAdmissionRequest, CreateNamespaceObject)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/cel/composition.go (CompositionEnv, lazy variables)
 * @chapter 03-api-security
 */
import { Environment } from "@marcbachmann/cel-js";
import type {
  ExpressionCompiler,
  ExpressionReturn,
} from "../../../api/validatingadmissionpolicy-validation.ts";
import { toCEL } from "./json-integers.ts";

export type { ExpressionReturn };

export interface Program {
  readonly expression: string;
  run(activation: Record<string, unknown>): unknown;
}

export type CompileResult = { ok: true; program: Program } | { ok: false; detail: string };

/** A runtime failure of one expression, with upstream's message. */
export class CELEvaluationError extends Error {
  override readonly name = "CELEvaluationError";
}

// #region environment
const environments = new Map<boolean, Environment>();

/** The declared names (upstream: the base environment plus OptionalVariableDeclarations). */
function environment(hasParams: boolean): Environment {
  let env = environments.get(hasParams);
  if (!env) {
    env = new Environment({ enableOptionalTypes: true, homogeneousAggregateLiterals: false })
      .registerVariable("object", "dyn")
      .registerVariable("oldObject", "dyn")
      .registerVariable("request", "dyn")
      .registerVariable("namespaceObject", "dyn")
      .registerVariable("variables", "map");
    if (hasParams) env = env.registerVariable("params", "dyn");
    environments.set(hasParams, env);
  }
  return env;
}
// #endregion environment

/** `<input>:line:column` of a 0-based offset, as cel-go prints positions. */
function position(expression: string, offset: number): string {
  const before = expression.slice(0, Math.max(0, offset));
  const line = before.split("\n").length;
  const column = offset - before.lastIndexOf("\n");
  return `<input>:${line}:${column}`;
}

function summaryOf(e: unknown): string {
  const err = e as { summary?: string; message?: string };
  return err.summary ?? err.message?.split("\n")[0] ?? String(e);
}

// #region compile
export function compile(expression: string, returns: ExpressionReturn, hasParams: boolean): CompileResult {
  const env = environment(hasParams);
  let checked: {
    valid: boolean;
    type?: string;
    error?: { summary?: string; message?: string; range?: { start: number } };
  };
  try {
    checked = env.check(expression) as typeof checked;
  } catch (e) {
    checked = { valid: false, error: e as { summary?: string; range?: { start: number } } };
  }
  if (!checked.valid) {
    const at = position(expression, checked.error?.range?.start ?? 0);
    return { ok: false, detail: `compilation failed: ERROR: ${at}: ${summaryOf(checked.error)}` };
  }
  const type = String(checked.type);
  const accepted = returns === "string-or-null" ? ["string", "null", "null_type"] : [returns];
  if (returns !== "any" && !accepted.includes(type) && type !== "dyn") {
    // cel-go's wording: one type is named as it is, two as a list ("must evaluate to one of […]").
    const wanted = returns === "string-or-null" ? "one of [string null_type]" : returns;
    return { ok: false, detail: `must evaluate to ${wanted} but got ${type}` };
  }
  const parsed = env.parse(expression);
  return {
    ok: true,
    program: {
      expression,
      run(activation) {
        try {
          return parsed(activation);
        } catch (e) {
          if (e instanceof CELEvaluationError) throw e;
          throw new CELEvaluationError(`expression '${expression}' resulted in error: ${summaryOf(e)}`);
        }
      },
    },
  };
}

/** The compiler the registry's validation uses (code/api cannot import a CEL library's seam). */
export const compileForValidation: ExpressionCompiler = (expression, returns, opts) => {
  const result = compile(expression, returns, opts.hasParams);
  return result.ok ? undefined : result.detail;
};
// #endregion compile

// #region activation
export interface ActivationInput {
  object?: unknown;
  oldObject?: unknown;
  request: unknown;
  params?: unknown;
  namespaceObject?: unknown;
}

/**
 * The names an expression reads for one request and one param. `variables` is an object whose
 * properties evaluate their expression on first read and remember the value (or the error).
 */
export function newActivation(
  input: ActivationInput,
  variables: readonly { name: string; program: Program }[],
): Record<string, unknown> {
  const activation: Record<string, unknown> = {
    object: toCEL(input.object ?? null),
    oldObject: toCEL(input.oldObject ?? null),
    request: toCEL(input.request),
    params: toCEL(input.params ?? null),
    namespaceObject: toCEL(input.namespaceObject ?? null),
  };
  const lazy: Record<string, unknown> = {};
  for (const v of variables) {
    let done = false;
    let value: unknown;
    let error: unknown;
    Object.defineProperty(lazy, v.name, {
      enumerable: true,
      get() {
        if (!done) {
          done = true;
          try {
            value = v.program.run(activation);
          } catch (e) {
            error = e;
          }
        }
        if (error) throw error;
        return value;
      },
    });
  }
  activation.variables = lazy;
  return activation;
}
// #endregion activation
