/**
 * Exercise: toleration matching — does one toleration of a pod cover one taint of a node?
 * Effect, key, then operator (Exists or Equal) with its value. README.md has the rules.
 */
import type { Taint, Toleration } from "../../../code/api/core.ts";

/** ToleratesTaint: true when `toleration` tolerates `taint`. */
export function toleratesTaint(toleration: Toleration, taint: Taint): boolean {
  throw new Error(
    `TODO: toleratesTaint — does ${JSON.stringify(toleration)} tolerate ${taint.key}=${taint.value ?? ""}:${taint.effect}?`,
  );
}
