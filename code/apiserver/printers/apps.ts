/**
 * apps/v1 tables: deployments (NAME READY UP-TO-DATE AVAILABLE AGE) and replicasets (NAME
 * DESIRED CURRENT READY AGE), each + CONTAINERS IMAGES SELECTOR for `-o wide`. Upstream:
 * printDeployment and printReplicaSet in pkg/printers/internalversion/printers.go.
 *
 * Solves: a rollout is read from these numbers — READY `2/3` (ready of desired), UP-TO-DATE
 * (pods of the newest template), AVAILABLE (ready for minReadySeconds) — and a ReplicaSet's
 * DESIRED vs CURRENT vs READY shows whether its controller is keeping up.
 *
 * Invariants: counts are integers (0 when the controller has not reported yet); the deployment
 * selector prints as the selector string ("" when empty), the replicaset one as
 * FormatLabelSelector ("<none>" when empty).
 *
 * @upstream kubernetes/kubernetes pkg/printers/internalversion/printers.go (printDeployment, printReplicaSet, layoutContainerCells)
 * @chapter 02-apiserver
 */
import type { Deployment, ReplicaSet } from "../../api/apps.ts";
import { labelSelectorAsSelector, selectorToString } from "../../api/labels.ts";
import {
  ageColumn,
  column,
  containersColumn,
  formatLabelSelector,
  imagesColumn,
  layoutContainerCells,
  nameColumn,
  translateTimestampSince,
} from "./helpers.ts";
import type { TablePrinter } from "./table.ts";

const selectorDescription = (owner: string) =>
  owner === "deployment"
    ? "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment."
    : "Selector is a label query over pods that should match the replica count. If the selector is empty, it is defaulted to the labels present on the pod template. Label keys and values that must match in order to be controlled by this replica set. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors";

// #region deployment-table
const deploymentPrinter: TablePrinter = {
  columns: [
    nameColumn,
    column("Ready", "string", "Number of the pod with ready state"),
    column(
      "Up-to-date",
      "string",
      "Total number of non-terminated pods targeted by this deployment that have the desired template spec.",
    ),
    column(
      "Available",
      "string",
      "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.",
    ),
    ageColumn,
    containersColumn,
    imagesColumn,
    column("Selector", "string", selectorDescription("deployment"), 1),
  ],
  print(obj, now) {
    const d = obj as Deployment;
    const parsed = labelSelectorAsSelector(d.spec?.selector);
    const selector = parsed.ok ? selectorToString(parsed.value) : "<invalid>";
    const [containers, images] = layoutContainerCells(d.spec?.template?.spec?.containers);
    return {
      cells: [
        d.metadata.name ?? "",
        `${d.status?.readyReplicas ?? 0}/${d.spec?.replicas ?? 0}`,
        d.status?.updatedReplicas ?? 0,
        d.status?.availableReplicas ?? 0,
        translateTimestampSince(d.metadata.creationTimestamp, now),
        containers,
        images,
        selector,
      ],
    };
  },
};
// #endregion deployment-table

const replicaSetPrinter: TablePrinter = {
  columns: [
    nameColumn,
    column(
      "Desired",
      "integer",
      "Replicas is the number of desired replicas. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller/#what-is-a-replicationcontroller",
    ),
    column(
      "Current",
      "integer",
      "Replicas is the most recently observed number of replicas. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller/#what-is-a-replicationcontroller",
    ),
    column("Ready", "integer", "The number of ready replicas for this replica set."),
    ageColumn,
    containersColumn,
    imagesColumn,
    column("Selector", "string", selectorDescription("replicaset"), 1),
  ],
  print(obj, now) {
    const rs = obj as ReplicaSet;
    const [containers, images] = layoutContainerCells(rs.spec?.template?.spec?.containers);
    return {
      cells: [
        rs.metadata.name ?? "",
        rs.spec?.replicas ?? 0,
        rs.status?.replicas ?? 0,
        rs.status?.readyReplicas ?? 0,
        translateTimestampSince(rs.metadata.creationTimestamp, now),
        containers,
        images,
        formatLabelSelector(rs.spec?.selector),
      ],
    };
  },
};

export const appsPrinters: Readonly<Record<string, TablePrinter>> = {
  deployments: deploymentPrinter,
  replicasets: replicaSetPrinter,
};
