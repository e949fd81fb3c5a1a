/**
 * Framework — one scheduling profile: its plugins sorted into extension points from a
 * configuration, and the Run…Plugins functions the scheduling and binding cycles call.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/runtime/framework.go (frameworkImpl, NewFramework, RunPreFilterPlugins, RunFilterPlugins, RunPostFilterPlugins, RunPreScorePlugins, RunScorePlugins, RunReservePluginsReserve, RunReservePluginsUnreserve, RunPermitPlugins, WaitOnPermit, RunPreBindPlugins, RunBindPlugins, RunPostBindPlugins, maxTimeout)
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/runtime/framework.go (RunPreFilterExtensionAddPod, RunPreFilterExtensionRemovePod)
 * @chapter 05-scheduler
 *
 * Solves: every policy of the scheduler is a plugin; the runtime's job is the order and the
 * rules between them — who may skip, whose rejection stops the chain, how scores from plugins
 * with different scales become one number per node, how a pod waits at Permit.
 *
 * Invariants:
 * - a plugin sits at every extension point it implements that the profile enables, in the
 *   configured order; a plugin object is built once per profile and shared by its points.
 * - Filter, Reserve, Permit and PreBind stop at the first non-success; an unexpected code
 *   becomes Error with "running … plugin" context; a rejection keeps its code and gets the
 *   plugin's name.
 * - a Score plugin's normalized scores lie in [0, 100] or the cycle fails; the total is
 *   Σ score × weight, weight ≥ 1.
 * - Unreserve runs in reverse order of Reserve, for every Reserve plugin (even those after the
 *   failing one: Unreserve must be idempotent).
 * - a Permit wait is capped at 15 minutes; a pod waits on the injected clock.
 *
 * The configuration types and the plugin registry are in registry.ts; Filter with nominated
 * pods is in nominated-pods.ts.
 */
import type { Pod } from "../../../api/core.ts";
import type { Clientset } from "../../../client/kubernetes/clientset.ts";
import type { SharedInformerFactory } from "../../../client/tools/cache/informer-factory.ts";
import { type Clock, realClock } from "../../../client/util/clock.ts";
import { activeSpan } from "../../../tracing/tracing.ts";
import type { Snapshot } from "../../backend/cache/snapshot.ts";
import { type FrameworkMetricsRecorder, pluginMetricsSamplePercent } from "../../metrics/metrics.ts";
import type { CycleState } from "../cycle-state.ts";
import type { NodeToStatus } from "../diagnosis.ts";
import {
  type BindPlugin,
  type FilterPlugin,
  MaxNodeScore,
  MinNodeScore,
  mergePreFilterResults,
  type NodePluginScores,
  type NodeScore,
  type PermitPlugin,
  type Plugin,
  type PodNominator,
  type PostBindPlugin,
  type PostFilterPlugin,
  type PostFilterResult,
  type PreBindPlugin,
  type PreEnqueuePlugin,
  type PreFilterPlugin,
  type PreFilterResult,
  type PreScorePlugin,
  type QueueSortPlugin,
  type ReservePlugin,
  type ScorePlugin,
} from "../interface.ts";
import type { NodeInfo } from "../node-info.ts";
import {
  asError,
  asStatus,
  Code,
  codeOf,
  isRejected,
  isSkip,
  isSuccess,
  isWait,
  newStatus,
  type Status,
} from "../status.ts";
import type { PodInfo } from "../types.ts";
import { runFilterPluginsWithNominatedPods } from "./nominated-pods.ts";
import {
  type ExtensionPoint,
  extensionPoints,
  type Handle,
  hookOf,
  type PluginRef,
  type ProfileConfig,
  type Registry,
} from "./registry.ts";
import { WaitingPod, WaitingPodsMap } from "./waiting-pods-map.ts";

/** maxTimeout: the longest a Permit plugin may make a pod wait. */
export const maxPermitTimeout = 15 * 60_000;

export interface FrameworkOptions {
  snapshot: Snapshot;
  clock?: Clock;
  clientSet?: Clientset;
  informerFactory?: SharedInformerFactory;
  podNominator?: PodNominator;
  /** The scheduling queue's Activate (preemption retries its preemptor through it). */
  podActivator?: { activate(pods: Pod[]): void };
  // Metrics (issue 14, interpod2): the binary's recorder; absent in simulations unless a test sets it.
  metricsRecorder?: FrameworkMetricsRecorder;
  /** Seconds, for the durations (default performance.now()); tests inject a fake. */
  metricsNow?: () => number;
  /** Whether a new cycle times its plugin calls (default: pluginMetricsSamplePercent of cycles). */
  samplePluginMetrics?: () => boolean;
}

export class Framework implements Handle {
  readonly profileName: string;
  readonly clock: Clock;
  readonly percentageOfNodesToScore: number;
  private readonly snapshot: Snapshot;
  private readonly opts: FrameworkOptions;
  private readonly waitingPods = new WaitingPodsMap();
  readonly scorePluginWeight = new Map<string, number>();
  preEnqueuePlugins: PreEnqueuePlugin[] = [];
  queueSortPlugins: QueueSortPlugin[] = [];
  preFilterPlugins: PreFilterPlugin[] = [];
  filterPlugins: FilterPlugin[] = [];
  postFilterPlugins: PostFilterPlugin[] = [];
  preScorePlugins: PreScorePlugin[] = [];
  scorePlugins: ScorePlugin[] = [];
  reservePlugins: ReservePlugin[] = [];
  permitPlugins: PermitPlugin[] = [];
  preBindPlugins: PreBindPlugin[] = [];
  bindPlugins: BindPlugin[] = [];
  postBindPlugins: PostBindPlugin[] = [];
  /** Every plugin of the profile by name (for EnqueueExtensions and tests). */
  readonly plugins = new Map<string, Plugin>();

  // #region new-framework
  constructor(registry: Registry, profile: ProfileConfig, opts: FrameworkOptions) {
    this.profileName = profile.schedulerName;
    this.snapshot = opts.snapshot;
    this.opts = opts;
    this.clock = opts.clock ?? realClock;
    this.percentageOfNodesToScore = profile.percentageOfNodesToScore ?? 0;
    const args = new Map((profile.pluginConfig ?? []).map((pc) => [pc.name, pc.args]));
    const build = (name: string): Plugin => {
      let p = this.plugins.get(name);
      if (p) return p;
      const factory = registry.get(name);
      if (!factory) throw new Error(`plugin "${name}" does not exist`);
      p = factory(args.get(name), this);
      this.plugins.set(name, p);
      return p;
    };
    const multi = profile.plugins.multiPoint?.enabled ?? [];
    for (const ep of extensionPoints) {
      const set = profile.plugins[ep] ?? {};
      const disabled = new Set((set.disabled ?? []).map((d) => d.name));
      const refs: PluginRef[] = [...(set.enabled ?? [])];
      // Explicitly enabled plugins come first; multiPoint fills in the rest that implement `ep`.
      for (const ref of multi) {
        if (disabled.has("*") || disabled.has(ref.name) || refs.some((r) => r.name === ref.name)) continue;
        if (typeof (build(ref.name) as unknown as Record<string, unknown>)[hookOf[ep]] === "function")
          refs.push(ref);
      }
      const list = this.listFor(ep);
      for (const ref of refs) {
        const p = build(ref.name);
        if (typeof (p as unknown as Record<string, unknown>)[hookOf[ep]] !== "function") {
          throw new Error(`plugin "${ref.name}" does not extend ${ep} plugin`);
        }
        list.push(p);
        if (ep === "score") this.scorePluginWeight.set(ref.name, ref.weight || 1);
      }
    }
    if (this.queueSortPlugins.length !== 1) {
      throw new Error(`one queue sort plugin required for profile with scheduler name "${this.profileName}"`);
    }
    if (this.bindPlugins.length === 0) {
      throw new Error(
        `at least one bind plugin is needed for profile with scheduler name "${this.profileName}"`,
      );
    }
  }

  private listFor(ep: ExtensionPoint): Plugin[] {
    return (this as unknown as Record<string, Plugin[]>)[`${ep}Plugins`];
  }
  // #endregion new-framework

  // #region handle
  snapshotSharedLister(): Snapshot {
    return this.snapshot;
  }
  clientSet(): Clientset | undefined {
    return this.opts.clientSet;
  }
  sharedInformerFactory(): SharedInformerFactory | undefined {
    return this.opts.informerFactory;
  }
  podNominator(): PodNominator | undefined {
    return this.opts.podNominator;
  }
  activate(pods: Pod[]): void {
    this.opts.podActivator?.activate(pods);
  }
  getWaitingPod(uid: string): WaitingPod | undefined {
    return this.waitingPods.get(uid);
  }
  iterateOverWaitingPods(fn: (wp: WaitingPod) => void): void {
    this.waitingPods.iterate(fn);
  }
  rejectWaitingPod(uid: string): boolean {
    const wp = this.waitingPods.get(uid);
    if (!wp) return false;
    wp.reject("", "removed");
    return true;
  }
  /** The plugins that can reject a pod: their EnqueueExtensions decide when it is retried. */
  enqueuePlugins(): Plugin[] {
    const lists: Plugin[][] = [
      this.preEnqueuePlugins,
      this.preFilterPlugins,
      this.filterPlugins,
      this.reservePlugins,
      this.permitPlugins,
    ];
    return [...new Set(lists.flat())];
  }
  hasFilterPlugins = () => this.filterPlugins.length > 0;
  hasPostFilterPlugins = () => this.postFilterPlugins.length > 0;
  hasScorePlugins = () => this.scorePlugins.length > 0;
  // #endregion handle

  // #region metrics
  // Metrics (issue 14, interpod2): scheduler_framework_extension_point_duration_seconds for every
  // run of an extension point, scheduler_plugin_execution_duration_seconds for each plugin call
  // in sampled cycles. Without a recorder both cost one check.
  private now(): number {
    return this.opts.metricsNow ? this.opts.metricsNow() : performance.now() / 1000;
  }

  private observePoint(ep: string, s: Status | undefined, start: number): void {
    this.opts.metricsRecorder?.observeExtensionPoint(
      ep,
      Code[codeOf(s)],
      this.profileName,
      this.now() - start,
    );
    // chapter 8: tracing (a course addition) — the extension point as an event of the cycle's span.
    activeSpan()?.addEvent(ep, {
      status: Code[codeOf(s)],
      durationMs: Math.round((this.now() - start) * 1e6) / 1e3,
    });
  }

  /**
   * Whether this cycle times each plugin call. The runners called once per node (Filter, Score,
   * AddPod / RemovePod) test it first and call the plugin directly when not, as upstream's
   * runFilterPlugin does: `timed` takes closures, and two closures per plugin per node is real
   * work on 5,000 nodes (more under tsx, which names every closure it creates).
   */
  private timing(state: CycleState): boolean {
    return this.opts.metricsRecorder !== undefined && state.recordPluginMetrics;
  }

  /** Times one plugin call when the cycle is sampled (upstream's runXPlugin helpers). */
  private timed<T>(
    state: CycleState,
    pl: Plugin,
    ep: string,
    call: () => T,
    statusOf: (r: T) => Status | undefined,
  ): T {
    const rec = this.opts.metricsRecorder;
    if (!rec || !state.recordPluginMetrics) return call();
    const start = this.now();
    const r = call();
    rec.observePluginDuration(pl.name(), ep, Code[codeOf(statusOf(r))], this.now() - start);
    return r;
  }

  private async timedAsync(
    state: CycleState,
    pl: Plugin,
    ep: string,
    call: () => Promise<Status | undefined>,
  ): Promise<Status | undefined> {
    const rec = this.opts.metricsRecorder;
    if (!rec || !state.recordPluginMetrics) return call();
    const start = this.now();
    const s = await call();
    rec.observePluginDuration(pl.name(), ep, Code[codeOf(s)], this.now() - start);
    return s;
  }
  // #endregion metrics

  // #region filter
  /**
   * RunPreFilterPlugins: the merged result, the status, and the plugins that narrowed the nodes.
   * Unresolvable stops at once (preemption cannot help); Unschedulable lets the rest run, since
   * preemption will need their state.
   */
  runPreFilterPlugins(
    state: CycleState,
    pod: Pod,
  ): [PreFilterResult | undefined, Status | undefined, Set<string>] {
    // PreFilter opens the scheduling cycle: the sampling decision upstream's scheduleOne makes
    // (its clones, for preemption, and the binding cycle share it).
    if (this.opts.metricsRecorder) {
      state.recordPluginMetrics =
        this.opts.samplePluginMetrics?.() ?? Math.random() * 100 < pluginMetricsSamplePercent;
    }
    const start = this.now();
    const r = this.preFilterPoint(state, pod);
    this.observePoint("PreFilter", r[1], start);
    return r;
  }

  private preFilterPoint(
    state: CycleState,
    pod: Pod,
  ): [PreFilterResult | undefined, Status | undefined, Set<string>] {
    let result: PreFilterResult | undefined;
    let returnStatus: Status | undefined;
    const pluginsWithNodes: string[] = [];
    for (const pl of this.preFilterPlugins) {
      const [r, s] = this.timed(
        state,
        pl,
        "PreFilter",
        () => pl.preFilter(state, pod),
        (x) => x[1],
      );
      if (isSkip(s)) {
        state.skipFilterPlugins.add(pl.name());
        continue;
      }
      if (s && !isSuccess(s)) {
        s.withPlugin(pl.name());
        if (s.code === Code.UnschedulableAndUnresolvable) return [undefined, s, new Set()];
        if (s.code === Code.Unschedulable) {
          returnStatus = s;
          continue;
        }
        return [
          undefined,
          errorStatus(`running PreFilter plugin "${pl.name()}"`, s).withPlugin(pl.name()),
          new Set(),
        ];
      }
      if (r?.nodeNames) pluginsWithNodes.push(pl.name());
      result = mergePreFilterResults(result, r);
      if (result?.nodeNames?.size === 0) {
        const msg =
          pluginsWithNodes.length === 1
            ? `node(s) didn't satisfy plugin ${pluginsWithNodes[0]}`
            : `node(s) didn't satisfy plugin(s) [${pluginsWithNodes.join(" ")}] simultaneously`;
        return [result, newStatus(Code.UnschedulableAndUnresolvable, msg), new Set(pluginsWithNodes)];
      }
    }
    // nodeplugins: the plugins that narrowed the nodes, as upstream — findNodesThatFitPod names
    // them in the absent nodes' "node(s) didn't satisfy plugin(s) [NodeAffinity]".
    return [result, returnStatus, new Set(pluginsWithNodes)];
  }

  /** RunFilterPlugins: the first plugin that does not pass decides; skipped plugins do not run. */
  runFilterPlugins(state: CycleState, pod: Pod, nodeInfo: NodeInfo): Status | undefined {
    for (const pl of this.filterPlugins) {
      if (state.skipFilterPlugins.has(pl.name())) continue;
      const s = this.timing(state)
        ? this.timed(
            state,
            pl,
            "Filter",
            () => pl.filter(state, pod, nodeInfo),
            (x) => x,
          )
        : pl.filter(state, pod, nodeInfo);
      if (isSuccess(s)) continue;
      if (!isRejected(s)) return errorStatus(`running "${pl.name()}" filter plugin`, s).withPlugin(pl.name());
      return s!.withPlugin(pl.name());
    }
    return undefined;
  }

  // #region prefilter-extensions
  // Preemption and nominated pods (issue 14, preemption): the PreFilterExtensions runners, which
  // preemption and nominated-pods.ts drive on copies of a node.

  /** RunPreFilterExtensionAddPod: every PreFilter plugin with extensions (and not skipped) sees the pod added. */
  runPreFilterExtensionAddPod(
    state: CycleState,
    podToSchedule: Pod,
    podInfoToAdd: PodInfo,
    nodeInfo: NodeInfo,
  ): Status | undefined {
    for (const pl of this.preFilterPlugins) {
      const ext = pl.preFilterExtensions?.();
      if (!ext || state.skipFilterPlugins.has(pl.name())) continue;
      const s = this.timing(state)
        ? this.timed(
            state,
            pl,
            "PreFilterExtensionAddPod",
            () => ext.addPod(state, podToSchedule, podInfoToAdd, nodeInfo),
            (x) => x,
          )
        : ext.addPod(state, podToSchedule, podInfoToAdd, nodeInfo);
      if (!isSuccess(s)) return errorStatus(`running AddPod on PreFilter plugin "${pl.name()}"`, s);
    }
    return undefined;
  }

  /** RunPreFilterExtensionRemovePod: the same for a pod taken off the node (a preemption victim). */
  runPreFilterExtensionRemovePod(
    state: CycleState,
    podToSchedule: Pod,
    podInfoToRemove: PodInfo,
    nodeInfo: NodeInfo,
  ): Status | undefined {
    for (const pl of this.preFilterPlugins) {
      const ext = pl.preFilterExtensions?.();
      if (!ext || state.skipFilterPlugins.has(pl.name())) continue;
      const s = this.timing(state)
        ? this.timed(
            state,
            pl,
            "PreFilterExtensionRemovePod",
            () => ext.removePod(state, podToSchedule, podInfoToRemove, nodeInfo),
            (x) => x,
          )
        : ext.removePod(state, podToSchedule, podInfoToRemove, nodeInfo);
      if (!isSuccess(s)) return errorStatus(`running RemovePod on PreFilter plugin "${pl.name()}"`, s);
    }
    return undefined;
  }

  /** RunFilterPluginsWithNominatedPods: see nominated-pods.ts. */
  runFilterPluginsWithNominatedPods(state: CycleState, pod: Pod, nodeInfo: NodeInfo): Status | undefined {
    return runFilterPluginsWithNominatedPods(this, state, pod, nodeInfo);
  }
  // #endregion prefilter-extensions

  /** RunPostFilterPlugins: the first success wins; otherwise every rejection's reasons. */
  runPostFilterPlugins(
    state: CycleState,
    pod: Pod,
    m: NodeToStatus,
  ): [PostFilterResult | undefined, Status | undefined] {
    const start = this.now();
    const r = this.postFilterPoint(state, pod, m);
    this.observePoint("PostFilter", r[1], start);
    return r;
  }

  private postFilterPoint(
    state: CycleState,
    pod: Pod,
    m: NodeToStatus,
  ): [PostFilterResult | undefined, Status | undefined] {
    let result: PostFilterResult | undefined;
    const reasons: string[] = [];
    let rejector = "";
    for (const pl of this.postFilterPlugins) {
      const [r, s] = this.timed(
        state,
        pl,
        "PostFilter",
        () => pl.postFilter(state, pod, m),
        (x) => x[1],
      );
      if (isSuccess(s)) return [r, s];
      if (s!.code === Code.UnschedulableAndUnresolvable) return [r, s!.withPlugin(pl.name())];
      if (!isRejected(s)) return [undefined, errorStatus(`running PostFilter plugin "${pl.name()}"`, s)];
      if (r?.nominatingInfo) result = r;
      reasons.push(...s!.reasons());
      if (!rejector) rejector = pl.name();
    }
    return [result, newStatus(Code.Unschedulable, ...reasons).withPlugin(rejector)];
  }
  // #endregion filter

  // #region score
  runPreScorePlugins(state: CycleState, pod: Pod, nodes: NodeInfo[]): Status | undefined {
    const start = this.now();
    const s = this.preScorePoint(state, pod, nodes);
    this.observePoint("PreScore", s, start);
    return s;
  }

  private preScorePoint(state: CycleState, pod: Pod, nodes: NodeInfo[]): Status | undefined {
    for (const pl of this.preScorePlugins) {
      const s = this.timed(
        state,
        pl,
        "PreScore",
        () => pl.preScore(state, pod, nodes),
        (x) => x,
      );
      if (isSkip(s)) {
        state.skipScorePlugins.add(pl.name());
        continue;
      }
      if (!isSuccess(s)) return errorStatus(`running PreScore plugin "${pl.name()}"`, s);
    }
    return undefined;
  }

  /**
   * RunScorePlugins: raw scores per plugin per node, each plugin's NormalizeScore over all
   * nodes, a range check, then × weight summed per node.
   */
  runScorePlugins(state: CycleState, pod: Pod, nodes: NodeInfo[]): [NodePluginScores[], Status | undefined] {
    const start = this.now();
    const r = this.scorePoint(state, pod, nodes);
    this.observePoint("Score", r[1], start);
    return r;
  }

  private scorePoint(
    state: CycleState,
    pod: Pod,
    nodes: NodeInfo[],
  ): [NodePluginScores[], Status | undefined] {
    const plugins = this.scorePlugins.filter((pl) => !state.skipScorePlugins.has(pl.name()));
    const result: NodePluginScores[] = nodes.map((n) => ({ name: n.nodeName(), scores: [], totalScore: 0 }));
    if (plugins.length === 0) return [result, undefined];
    const perPlugin: NodeScore[][] = plugins.map(() => []);
    for (const [j, pl] of plugins.entries()) {
      for (const n of nodes) {
        const [score, s] = this.timing(state)
          ? this.timed(
              state,
              pl,
              "Score",
              () => pl.score(state, pod, n),
              (x) => x[1],
            )
          : pl.score(state, pod, n);
        if (!isSuccess(s)) {
          return [[], errorStatus(`running Score plugins: plugin "${pl.name()}" failed with`, s)];
        }
        perPlugin[j].push({ name: n.nodeName(), score });
      }
      // explain (schedex): raw scores, before NormalizeScore rewrites the list in place.
      if (state.explain) state.explain.recordScores(pl.name(), perPlugin[j]);
      const ext = pl.scoreExtensions();
      if (ext) {
        const s = this.timed(
          state,
          pl,
          "ScoreExtensionNormalize",
          () => ext.normalizeScore(state, pod, perPlugin[j]),
          (x) => x,
        );
        if (!isSuccess(s)) {
          return [
            [],
            errorStatus(`running Normalize on Score plugins: plugin "${pl.name()}" failed with`, s),
          ];
        }
      }
    }
    for (const [j, pl] of plugins.entries()) {
      const weight = this.scorePluginWeight.get(pl.name()) ?? 1;
      for (const [i, ns] of perPlugin[j].entries()) {
        if (ns.score > MaxNodeScore || ns.score < MinNodeScore) {
          const msg = `applying score defaultWeights on Score plugins: plugin "${pl.name()}" returns an invalid score ${ns.score}, it should in the range of [${MinNodeScore}, ${MaxNodeScore}] after normalizing`;
          return [[], asStatus(new Error(msg))];
        }
        const weighted = ns.score * weight;
        result[i].scores.push({ name: pl.name(), score: weighted });
        result[i].totalScore += weighted;
      }
    }
    return [result, undefined];
  }
  // #endregion score

  // #region reserve-permit
  runReservePluginsReserve(state: CycleState, pod: Pod, nodeName: string): Status | undefined {
    const start = this.now();
    const s = this.reservePoint(state, pod, nodeName);
    this.observePoint("Reserve", s, start);
    return s;
  }

  private reservePoint(state: CycleState, pod: Pod, nodeName: string): Status | undefined {
    for (const pl of this.reservePlugins) {
      const s = this.timed(
        state,
        pl,
        "Reserve",
        () => pl.reserve(state, pod, nodeName),
        (x) => x,
      );
      if (isSuccess(s)) continue;
      if (isRejected(s)) return s!.withPlugin(pl.name());
      return errorStatus(`running Reserve plugin "${pl.name()}"`, s).withPlugin(pl.name());
    }
    return undefined;
  }

  runReservePluginsUnreserve(state: CycleState, pod: Pod, nodeName: string): void {
    const start = this.now();
    for (let i = this.reservePlugins.length - 1; i >= 0; i--) {
      const pl = this.reservePlugins[i];
      this.timed(
        state,
        pl,
        "Unreserve",
        () => pl.unreserve(state, pod, nodeName),
        () => undefined,
      );
    }
    this.observePoint("Unreserve", undefined, start);
  }

  /** RunPermitPlugins: a rejection stops at once; any Wait makes the pod a WaitingPod. */
  runPermitPlugins(state: CycleState, pod: Pod, nodeName: string): Status | undefined {
    const start = this.now();
    const s = this.permitPoint(state, pod, nodeName);
    this.observePoint("Permit", s, start);
    return s;
  }

  private permitPoint(state: CycleState, pod: Pod, nodeName: string): Status | undefined {
    const waits = new Map<string, number>();
    for (const pl of this.permitPlugins) {
      const [s, timeout] = this.timed(
        state,
        pl,
        "Permit",
        () => pl.permit(state, pod, nodeName),
        (x) => x[0],
      );
      if (isSuccess(s)) continue;
      if (isRejected(s)) return s!.withPlugin(pl.name());
      if (isWait(s)) {
        waits.set(pl.name(), Math.min(timeout, maxPermitTimeout));
        continue;
      }
      return errorStatus(`running Permit plugin "${pl.name()}"`, s).withPlugin(pl.name());
    }
    if (waits.size === 0) return undefined;
    this.waitingPods.add(pod.metadata.uid ?? "", new WaitingPod(pod, waits, this.clock));
    return newStatus(
      Code.Wait,
      `one or more plugins asked to wait and no plugin rejected pod "${pod.metadata.name}"`,
    );
  }

  /** WaitOnPermit: the binding cycle's first step; no waiting pod means Success. */
  async waitOnPermit(pod: Pod): Promise<Status | undefined> {
    const uid = pod.metadata.uid ?? "";
    const wp = this.waitingPods.get(uid);
    if (!wp) return undefined;
    try {
      const s = await wp.done;
      if (isSuccess(s) || isRejected(s)) return s;
      return errorStatus(`error while waiting on permit for pod ${pod.metadata.name}`, s);
    } finally {
      this.waitingPods.remove(uid);
    }
  }
  // #endregion reserve-permit

  // #region bind
  async runPreBindPlugins(state: CycleState, pod: Pod, nodeName: string): Promise<Status | undefined> {
    const start = this.now();
    const s = await this.preBindPoint(state, pod, nodeName);
    this.observePoint("PreBind", s, start);
    return s;
  }

  private async preBindPoint(state: CycleState, pod: Pod, nodeName: string): Promise<Status | undefined> {
    for (const pl of this.preBindPlugins) {
      const s = await this.timedAsync(state, pl, "PreBind", () => pl.preBind(state, pod, nodeName));
      if (isSuccess(s)) continue;
      if (isRejected(s)) return s!.withPlugin(pl.name());
      return errorStatus(`running PreBind plugin "${pl.name()}"`, s);
    }
    return undefined;
  }

  /** RunBindPlugins: binders in order until one does not Skip; all Skip → Skip. */
  async runBindPlugins(state: CycleState, pod: Pod, nodeName: string): Promise<Status | undefined> {
    const start = this.now();
    const s = await this.bindPoint(state, pod, nodeName);
    this.observePoint("Bind", s, start);
    return s;
  }

  private async bindPoint(state: CycleState, pod: Pod, nodeName: string): Promise<Status | undefined> {
    let last: Status | undefined = newStatus(Code.Skip);
    for (const pl of this.bindPlugins) {
      last = await this.timedAsync(state, pl, "Bind", () => pl.bind(state, pod, nodeName));
      if (isSkip(last)) continue;
      if (isSuccess(last)) return undefined;
      if (isRejected(last)) return last!.withPlugin(pl.name());
      return errorStatus(`running Bind plugin "${pl.name()}"`, last);
    }
    return last;
  }

  runPostBindPlugins(state: CycleState, pod: Pod, nodeName: string): void {
    const start = this.now();
    for (const pl of this.postBindPlugins)
      this.timed(
        state,
        pl,
        "PostBind",
        () => pl.postBind(state, pod, nodeName),
        () => undefined,
      );
    this.observePoint("PostBind", undefined, start);
  }
  // #endregion bind
}

/** Wraps a status as Error with context, as upstream's fmt.Errorf("…: %w", status.AsError()). */
function errorStatus(context: string, s: Status | undefined): Status {
  const cause = asError(s) ?? new Error("unknown");
  const err = new Error(`${context}: ${cause.message}`, { cause });
  return asStatus(err)!;
}
