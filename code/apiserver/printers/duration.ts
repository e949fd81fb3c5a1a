/**
 * HumanDuration — the AGE column: "45s", "3m20s", "5h12m", "2d3h", "400d", "3y20d". Upstream:
 * HumanDuration in apimachinery's util/duration/duration.go.
 *
 * Solves:
 * - an age must be readable at a glance and short enough for a table column, yet precise
 *   where precision matters: seconds while an object is young, then minutes, hours, days,
 *   years, keeping about two significant units (~2-3 significant figures);
 * - clocks of the server and of the writer differ slightly: a timestamp less than 2 seconds in
 *   the future reads as "0s", not as nonsense; anything further is "<invalid>".
 *
 * Invariants:
 * - whole units only, each truncated (never rounded): 119.9s is "119s", 120s is "2m";
 * - the thresholds are upstream's: seconds below 2m, m+s below 10m, m below 3h, h+m below 8h,
 *   h below 48h, d+h below 8d, d below 2y, y+d below 8y, then years.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/util/duration/duration.go (HumanDuration)
 * @chapter 02-apiserver
 */

// #region human-duration
/** `ms` is a duration in milliseconds (Go's time.Duration, truncated to whole units as Go's int conversions do). */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 60 * 2) return `${seconds}s`;
  const minutes = Math.trunc(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 60 * 3) return `${minutes}m`;
  const hours = Math.trunc(minutes / 60);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  const days = Math.trunc(hours / 24);
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${days}d` : `${days}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${days}d`;
  const years = Math.trunc(days / 365);
  if (hours < 24 * 365 * 8) {
    const d = days % 365;
    return d === 0 ? `${years}y` : `${years}y${d}d`;
  }
  return `${years}y`;
}
// #endregion human-duration
