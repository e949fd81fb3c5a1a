/**
 * Plugin args validation — the ranges and shapes each in-tree plugin's args must have, with
 * upstream's messages and field paths (`profiles[0].pluginConfig[1].args.hardPodAffinityWeight`).
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/apis/config/validation/validation_pluginargs.go (ValidateDefaultPreemptionArgs, ValidateInterPodAffinityArgs, ValidatePodTopologySpreadArgs, ValidateNodeResourcesBalancedAllocationArgs, ValidateNodeResourcesFitArgs, validateFunctionShape, validateResources)
 * @chapter 05-scheduler
 *
 * Solves: a weight of 1000 or a RequestedToCapacityRatio shape that goes down then up would
 * not crash the scheduler — it would quietly score nodes wrongly. Refusing it at start-up, with
 * the field named, is the only place the operator will notice.
 *
 * Invariants:
 * - each validator returns every problem it finds, in upstream's order; none stops early
 *   except validateFunctionShape's "sorted" check, which reports the first unsorted point only.
 * - the args are the defaulted ones: a weight left out is already 1, a strategy left out is
 *   already LeastAllocated over cpu and memory.
 * - NodeAffinityArgs.addedAffinity is not validated here (upstream builds a NodeSelector from it
 *   with component-helpers' messages); the NodeAffinity plugin meets bad terms when it starts.
 */
import {
  childPath,
  duplicate,
  type FieldError,
  forbidden,
  indexPath,
  invalid,
  notSupported,
  required,
} from "../../../api/field-errors.ts";
import { validateLabelName } from "../../../api/object-meta-validation.ts";
import type {
  DefaultPreemptionArgs,
  InterPodAffinityArgs,
  NodeResourcesBalancedAllocationArgs,
  NodeResourcesFitArgs,
  PodTopologySpreadArgs,
  ResourceSpec,
  UtilizationShapePoint,
} from "./types-pluginargs.ts";

/** MaxCustomPriorityScore: the top of a RequestedToCapacityRatio shape's score scale. */
export const MaxCustomPriorityScore = 10;

// #region preemption-affinity
export function validateDefaultPreemptionArgs(path: string, args: DefaultPreemptionArgs): FieldError[] {
  const errs: FieldError[] = [];
  const pct = childPath(path, "minCandidateNodesPercentage");
  const abs = childPath(path, "minCandidateNodesAbsolute");
  if (args.minCandidateNodesPercentage < 0 || args.minCandidateNodesPercentage > 100) {
    errs.push(invalid(pct, args.minCandidateNodesPercentage, "not in valid range [0, 100]"));
  }
  if (args.minCandidateNodesAbsolute < 0) {
    errs.push(invalid(abs, args.minCandidateNodesAbsolute, "not in valid range [0, inf)"));
  }
  // Both zero would make preemption look at no node at all.
  if (args.minCandidateNodesPercentage === 0 && args.minCandidateNodesAbsolute === 0) {
    errs.push(
      invalid(pct, 0, "cannot be zero at the same time as minCandidateNodesAbsolute"),
      invalid(abs, 0, "cannot be zero at the same time as minCandidateNodesPercentage"),
    );
  }
  return errs;
}

export function validateInterPodAffinityArgs(path: string, args: InterPodAffinityArgs): FieldError[] {
  const w = args.hardPodAffinityWeight;
  if (w < 0 || w > 100)
    return [invalid(childPath(path, "hardPodAffinityWeight"), w, "not in valid range [0, 100]")];
  return [];
}
// #endregion preemption-affinity

// #region topology-spread
export function validatePodTopologySpreadArgs(path: string, args: PodTopologySpreadArgs): FieldError[] {
  const errs: FieldError[] = [];
  const constraints = args.defaultConstraints ?? [];
  const typePath = childPath(path, "defaultingType");
  if (args.defaultingType !== "System" && args.defaultingType !== "List") {
    errs.push(notSupported(typePath, args.defaultingType, ["System", "List"]));
  } else if (args.defaultingType === "System" && constraints.length > 0) {
    // System means "use the built-in constraints": a list beside it would be ignored.
    errs.push(invalid(typePath, args.defaultingType, "when .defaultConstraints are not empty"));
  }
  const listPath = childPath(path, "defaultConstraints");
  constraints.forEach((c, i) => {
    const p = indexPath(listPath, i);
    if (!(c.maxSkew > 0))
      errs.push(invalid(childPath(p, "maxSkew"), c.maxSkew, "not in valid range (0, inf)"));
    const keyPath = childPath(p, "topologyKey");
    if (!c.topologyKey) errs.push(required(keyPath, "can not be empty"));
    else errs.push(...validateLabelName(c.topologyKey, keyPath));
    const whenPath = childPath(p, "whenUnsatisfiable");
    if (!c.whenUnsatisfiable) errs.push(required(whenPath, "can not be empty"));
    else if (c.whenUnsatisfiable !== "DoNotSchedule" && c.whenUnsatisfiable !== "ScheduleAnyway") {
      errs.push(notSupported(whenPath, c.whenUnsatisfiable, ["DoNotSchedule", "ScheduleAnyway"]));
    }
    // A default constraint applies to every pod: its selector is each pod's own Service/owner.
    if (c.labelSelector) {
      errs.push(
        forbidden(
          childPath(p, "labelSelector"),
          "constraint must not define a selector, as they deduced for each pod",
        ),
      );
    }
    const earlier = constraints
      .slice(0, i)
      .some((o) => o.topologyKey === c.topologyKey && o.whenUnsatisfiable === c.whenUnsatisfiable);
    if (earlier) errs.push(duplicate(indexPath(listPath, i), `{${c.topologyKey}, ${c.whenUnsatisfiable}}`));
  });
  return errs;
}
// #endregion topology-spread

// #region resources
function validateFunctionShape(shape: UtilizationShapePoint[], path: string): FieldError[] {
  if (shape.length === 0) return [required(path, "at least one point must be specified")];
  const errs: FieldError[] = [];
  for (let i = 1; i < shape.length; i++) {
    if (shape[i - 1]!.utilization >= shape[i]!.utilization) {
      errs.push(
        invalid(
          childPath(indexPath(path, i), "utilization"),
          shape[i]!.utilization,
          "values must be sorted in increasing order",
        ),
      );
      break;
    }
  }
  shape.forEach((pt, i) => {
    if (pt.utilization < 0 || pt.utilization > 100) {
      errs.push(
        invalid(childPath(indexPath(path, i), "utilization"), pt.utilization, "not in valid range [0, 100]"),
      );
    }
    if (pt.score < 0 || pt.score > MaxCustomPriorityScore) {
      errs.push(
        invalid(
          childPath(indexPath(path, i), "score"),
          pt.score,
          `not in valid range [0, ${MaxCustomPriorityScore}]`,
        ),
      );
    }
  });
  return errs;
}

function validateResources(resources: ResourceSpec[], path: string): FieldError[] {
  const errs: FieldError[] = [];
  resources.forEach((r, i) => {
    if (r.weight <= 0 || r.weight > 100) {
      errs.push(
        invalid(
          childPath(indexPath(path, i), "weight"),
          r.weight,
          `resource weight of ${r.name} not in valid range (0, 100]`,
        ),
      );
    }
  });
  return errs;
}

export function validateNodeResourcesBalancedAllocationArgs(
  path: string,
  args: NodeResourcesBalancedAllocationArgs,
): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  args.resources.forEach((r, i) => {
    const p = indexPath(childPath(path, "resources"), i);
    if (seen.has(r.name)) errs.push(duplicate(childPath(p, "name"), r.name));
    seen.add(r.name);
    // Balance is a standard deviation of fractions: a weight would have no meaning.
    if (r.weight !== 1) errs.push(invalid(childPath(p, "weight"), r.weight, "must be 1"));
  });
  return errs;
}

export function validateNodeResourcesFitArgs(path: string, args: NodeResourcesFitArgs): FieldError[] {
  const errs: FieldError[] = [];
  (args.ignoredResources ?? []).forEach((res, i) => {
    errs.push(...validateLabelName(res, indexPath(childPath(path, "ignoredResources"), i)));
  });
  (args.ignoredResourceGroups ?? []).forEach((group, i) => {
    const p = indexPath(childPath(path, "ignoredResourceGroups"), i);
    if (group.includes("/")) errs.push(invalid(p, group, "resource group name can't contain '/'"));
    errs.push(...validateLabelName(group, p));
  });
  const strategyPath = childPath(path, "scoringStrategy");
  const s = args.scoringStrategy;
  if (!s) return [...errs, required(strategyPath, "ScoringStrategy field is required")];
  const types = ["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"];
  if (!types.includes(s.type)) errs.push(notSupported(childPath(strategyPath, "type"), s.type ?? "", types));
  errs.push(...validateResources(s.resources, childPath(strategyPath, "resources")));
  const ratioPath = childPath(strategyPath, "requestedToCapacityRatio");
  if (s.type === "RequestedToCapacityRatio") {
    if (!s.requestedToCapacityRatio) {
      errs.push(required(ratioPath, "must be specified when type is RequestedToCapacityRatio"));
    } else {
      errs.push(
        ...validateFunctionShape(s.requestedToCapacityRatio.shape ?? [], childPath(ratioPath, "shape")),
      );
    }
  } else if (s.requestedToCapacityRatio) {
    errs.push(forbidden(ratioPath, "must be nil when type is not RequestedToCapacityRatio"));
  }
  return errs;
}
// #endregion resources
