/**
 * The course plan — chapters 0 to 8 and what each builds — joined to the chapters that exist.
 *
 * Solves: the landing page, chapter 0's map of the course and the getting-started page must say
 * plainly which chapters a learner can read today and which are still to come. A chapter exists
 * when its folder does (`chapters/NN-slug/`, read by scripts/course.ts), so "available" is never
 * written by hand: the pages show `<CourseMap/>`, which reads this, and a chapter that lands moves
 * from "coming" to "available" with no page to edit.
 *
 * Invariants:
 * - a chapter is `available` exactly when its folder exists, and then links to it with the title
 *   of its own page; every other planned chapter is `coming`, with no link;
 * - a chapter folder the plan does not list is still shown (available, with its own title).
 *
 * @upstream none — course tooling
 * @chapter 00-life-of-a-pod
 */
import { listChapters } from "../scripts/course.ts";

export interface PlannedChapter {
  number: number;
  title: string;
  /** What the chapter builds. */
  builds: string;
  /** The piece of chapter 0's whole flow it covers. */
  flow: string;
  /** Words that name what only this chapter builds: a page that uses them speaks of this chapter. */
  terms: string[];
}

/** The plan, as the course design's chapter table has it; the folders decide what exists. */
export const coursePlan: PlannedChapter[] = [
  {
    number: 0,
    title: "The life of a pod",
    builds: "orientation, setup, grading",
    flow: "the whole flow, on its own page",
    terms: [],
  },
  {
    number: 1,
    title: "etcd: MVCC and watch",
    builds:
      "revisions, key index, range at a revision, txn, compaction, watch from a revision, durability, the etcd v3 wire API",
    flow: "steps 3–4: the conditional write, the revision, the watch the API server feeds from",
    terms: ["MVCC", "compaction"],
  },
  {
    number: 2,
    title: "The API server: resources, list and watch",
    builds:
      "REST resources over the store, `resourceVersion`, optimistic concurrency, list/watch, discovery — real `kubectl` works",
    flow: "steps 1, 3, 4, 7, 10: `POST pods`, `pods/binding`, `pods/status`, `?watch=true`, 410 Gone",
    terms: ["resourceVersion", "discovery"],
  },
  {
    number: 3,
    title: "The API server: authentication, authorization, admission",
    builds:
      "x509 / token / service-account authentication, RBAC, mutating and validating admission, webhooks",
    flow: "step 2: everything a request passes before it is stored",
    terms: ["authentication", "authorization", "RBAC", "admission"],
  },
  {
    number: 4,
    title: "Informers and controllers",
    builds: "reflector, DeltaFIFO, indexer, shared informer, workqueue, a ReplicaSet controller",
    flow: "steps 5 and 11: how components consume watches; who creates pods for a ReplicaSet",
    terms: ["informer", "reflector", "DeltaFIFO", "workqueue", "controller"],
  },
  {
    number: 5,
    title: "The scheduler",
    builds:
      "scheduling queue, cache and snapshot, framework extension points, default plugins, binding, preemption",
    flow: "steps 5–7: unassigned pod → queue → Filter → Score → bind",
    terms: ["scheduler", "ScheduleOne", "preemption"],
  },
  {
    number: 6,
    title: "Leader election",
    builds: "Lease objects, acquire / renew / release, HA scheduler and controller-manager",
    flow: "why only one scheduler binds `web`, even with three running",
    terms: ["leader election"],
  },
  {
    number: 7,
    title: "The kubelet",
    builds:
      "pod watch by node, runtime, pod lifecycle, startup / liveness / readiness probes, node heartbeat",
    flow: "steps 8–10: from `ADDED` to `Running` and `Ready`",
    terms: ["kubelet", "probe"],
  },
  {
    number: 8,
    title: "The whole cluster",
    builds: "everything together, driven by `kubectl`; failures on purpose",
    flow: "the whole flow again, for real — then with watches cut, leaders killed, nodes lost",
    terms: ["whole cluster", "npm run cluster"],
  },
];

export interface CourseMapRow extends PlannedChapter {
  status: "available" | "coming";
  /** The chapter's page, when it exists. */
  link?: string;
}

/** Every planned chapter (and any chapter folder beyond the plan), with what exists today. */
export function courseMap(base?: string): CourseMapRow[] {
  const folders = listChapters(base);
  const rows: CourseMapRow[] = coursePlan.map((planned) => {
    const folder = folders.find((c) => c.number === planned.number);
    return folder
      ? { ...planned, title: folder.title, status: "available", link: `/chapters/${folder.dir}/` }
      : { ...planned, status: "coming" };
  });
  for (const folder of folders) {
    if (rows.some((r) => r.number === folder.number)) continue;
    rows.push({
      number: folder.number,
      title: folder.title,
      builds: "",
      flow: "",
      terms: [],
      status: "available",
      link: `/chapters/${folder.dir}/`,
    });
  }
  return rows.sort((a, b) => a.number - b.number);
}
