/**
 * DefaultNormalizeScore — scale a plugin's raw scores so the best node gets MaxNodeScore, and
 * optionally reverse them (fewer is better).
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/plugins/helper/normalize_score.go (DefaultNormalizeScore)
 * @chapter 05-scheduler
 *
 * Solves: a raw count (untolerated PreferNoSchedule taints, matching pods) has no fixed range;
 * weights only mean something once every plugin speaks 0–100.
 *
 * Invariants: integer arithmetic as Go's int64 (truncating division); when every raw score is
 * 0, reverse gives every node MaxNodeScore and no reverse leaves them 0.
 */
import type { NodeScore } from "../../framework/interface.ts";

// #region normalize
export function defaultNormalizeScore(maxPriority: number, reverse: boolean, scores: NodeScore[]): void {
  let max = 0;
  for (const s of scores) max = Math.max(max, s.score);
  if (max === 0) {
    if (reverse) for (const s of scores) s.score = maxPriority;
    return;
  }
  for (const s of scores) {
    let v = Math.trunc((maxPriority * s.score) / max);
    if (reverse) v = maxPriority - v;
    s.score = v;
  }
}
// #endregion normalize
