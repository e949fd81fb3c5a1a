/**
 * BuildBrokenLinearFunction — a function given by points (utilization → score) and straight
 * lines between them, flat before the first point and after the last.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/plugins/helper/shape_score.go (FunctionShape, FunctionShapePoint, BuildBrokenLinearFunction)
 * @chapter 05-scheduler
 *
 * Solves: RequestedToCapacityRatio lets an operator draw the score curve (pack: score rises
 * with utilization; spread: it falls; or anything in between) with a handful of points,
 * instead of choosing between two built-in formulas.
 *
 * Invariants: points are sorted by utilization (validation's job); f(p) = score_0 for
 * p ≤ u_0, score_{n−1} for p > u_{n−1}, and between u_{i−1} < p ≤ u_i
 * s_{i−1} + (s_i − s_{i−1}) × (p − u_{i−1}) / (u_i − u_{i−1}) in integer division (Go int64).
 */

export interface FunctionShapePoint {
  utilization: number;
  score: number;
}

// #region broken-linear
export function buildBrokenLinearFunction(shape: readonly FunctionShapePoint[]): (p: number) => number {
  return (p) => {
    for (const [i, pt] of shape.entries()) {
      if (p > pt.utilization) continue;
      if (i === 0) return shape[0].score;
      const prev = shape[i - 1];
      return (
        prev.score +
        Math.trunc(((pt.score - prev.score) * (p - prev.utilization)) / (pt.utilization - prev.utilization))
      );
    }
    return shape[shape.length - 1].score;
  };
}
// #endregion broken-linear
