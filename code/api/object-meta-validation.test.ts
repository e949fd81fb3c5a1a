import { describe, expect, it } from "vitest";
import { type FieldError, fieldErrorToString } from "./field-errors.ts";
import type { ObjectMeta } from "./meta.ts";
import {
  TOTAL_ANNOTATION_SIZE_LIMIT_B,
  validateLabelSelector,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from "./object-meta-validation.ts";
import { nameIsDNSLabel, nameIsDNSSubdomain } from "./string-validation.ts";

// Expected texts follow apimachinery v0.32's pkg/api/validation/objectmeta.go and
// pkg/apis/meta/v1/validation/validation.go, plus core's validateKubeFinalizerName.

const text = (errors: FieldError[]): string[] => errors.map(fieldErrorToString);
const QUALIFIED_NAME_REGEX =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

describe("validateObjectMeta", () => {
  it.each<[string, ObjectMeta, boolean, string[]]>([
    ["valid namespaced", { name: "web", namespace: "default", labels: { app: "web" } }, true, []],
    ["valid cluster-scoped", { name: "node-1" }, false, []],
    [
      "generateName only",
      { generateName: "web-", namespace: "default" },
      true,
      ["metadata.name: Required value: name or generateName is required"],
    ],
    [
      "neither",
      { namespace: "default" },
      true,
      ["metadata.name: Required value: name or generateName is required"],
    ],
    ["namespace missing", { name: "web" }, true, ["metadata.namespace: Required value"]],
    [
      "namespace on a cluster-scoped kind",
      { name: "n", namespace: "default" },
      false,
      ["metadata.namespace: Forbidden: not allowed on this type"],
    ],
    [
      "negative generation",
      { name: "web", generation: -1 },
      false,
      ["metadata.generation: Invalid value: -1: must be greater than or equal to 0"],
    ],
    [
      "bad label key and value",
      { name: "web", labels: { "-bad": "x y" } },
      false,
      [
        `metadata.labels: Invalid value: "-bad": ${QUALIFIED_NAME_REGEX}`,
        "metadata.labels: Invalid value: \"x y\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
      ],
    ],
    [
      "bad annotation key (checked lower-cased, reported as given)",
      { name: "web", annotations: { "Example.com/Key": "ok", "a b": "x" } },
      false,
      [`metadata.annotations: Invalid value: "a b": ${QUALIFIED_NAME_REGEX}`],
    ],
    [
      "owner references: incomplete, banned, two controllers",
      {
        name: "web",
        ownerReferences: [
          { apiVersion: "apps/v1", kind: "ReplicaSet", name: "a", uid: "1", controller: true },
          { apiVersion: "", kind: "", name: "", uid: "" },
          { apiVersion: "apps/v1", kind: "ReplicaSet", name: "b", uid: "2", controller: true },
        ],
      },
      false,
      [
        'metadata.ownerReferences.apiVersion: Invalid value: "": version must not be empty',
        'metadata.ownerReferences.kind: Invalid value: "": kind must not be empty',
        'metadata.ownerReferences.name: Invalid value: "": name must not be empty',
        'metadata.ownerReferences.uid: Invalid value: "": uid must not be empty',
        expect.stringMatching(
          /^metadata\.ownerReferences: Invalid value: .*: Only one reference can have Controller set to true\. Found "true" in references for ReplicaSet\/a and ReplicaSet\/b$/,
        ) as unknown as string,
      ],
    ],
    [
      "finalizers: unprefixed unknown, orphan with foregroundDeletion",
      { name: "web", finalizers: ["cleanup", "orphan", "foregroundDeletion", "example.com/ok"] },
      false,
      [
        'metadata.finalizers: Invalid value: []string{"cleanup", "orphan", "foregroundDeletion", "example.com/ok"}: finalizer orphan and foregroundDeletion cannot be both set',
        'metadata.finalizers[0]: Invalid value: "cleanup": name is neither a standard finalizer name nor is it fully qualified',
      ],
    ],
  ])("%s", (_name, meta, namespaced, expected) => {
    expect(text(validateObjectMeta(meta, namespaced, nameIsDNSSubdomain))).toEqual(expected);
  });

  it("checks a generateName as a prefix with the kind's name rule", () => {
    expect(text(validateObjectMeta({ generateName: "Web-", name: "web-x" }, false, nameIsDNSLabel))).toEqual([
      "metadata.generateName: Invalid value: \"Web-\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    ]);
  });

  it("limits annotations to 256 KiB in total", () => {
    const big = { a: "x".repeat(TOTAL_ANNOTATION_SIZE_LIMIT_B - 1) };
    expect(validateObjectMeta({ name: "w", annotations: big }, false, nameIsDNSSubdomain)).toEqual([]);
    const tooBig = { ab: "x".repeat(TOTAL_ANNOTATION_SIZE_LIMIT_B - 1) };
    expect(text(validateObjectMeta({ name: "w", annotations: tooBig }, false, nameIsDNSSubdomain))).toEqual([
      "metadata.annotations: Too long: may not be more than 262144 bytes",
    ]);
  });
});

describe("validateObjectMetaUpdate", () => {
  const old: ObjectMeta = {
    name: "web",
    namespace: "default",
    uid: "u-1",
    resourceVersion: "5",
    generation: 3,
    creationTimestamp: "2024-01-02T03:04:05Z",
  };

  it("accepts label, annotation and resourceVersion changes", () => {
    expect(validateObjectMetaUpdate({ ...old, resourceVersion: "9", labels: { a: "b" } }, old)).toEqual([]);
  });

  it("keeps identity fixed and generation monotonic", () => {
    const changed: ObjectMeta = {
      name: "web2",
      namespace: "other",
      uid: "u-2",
      generation: 2,
      creationTimestamp: "2025-01-01T00:00:00Z",
    };
    expect(text(validateObjectMetaUpdate(changed, old))).toEqual([
      'metadata.resourceVersion: Invalid value: "": must be specified for an update',
      "metadata.generation: Invalid value: 2: must not be decremented",
      'metadata.name: Invalid value: "web2": field is immutable',
      'metadata.namespace: Invalid value: "other": field is immutable',
      'metadata.uid: Invalid value: "u-2": field is immutable',
      "metadata.creationTimestamp: Invalid value: 2025-01-01 00:00:00 +0000 UTC: field is immutable",
    ]);
  });

  it("refuses new finalizers once deletion has started", () => {
    const deleting = { ...old, deletionTimestamp: "2024-02-01T00:00:00Z", finalizers: ["kubernetes"] };
    expect(
      text(
        validateObjectMetaUpdate(
          { ...deleting, finalizers: ["kubernetes", "example.com/b", "example.com/a"] },
          deleting,
        ),
      ),
    ).toEqual([
      'metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/a", "example.com/b"}',
    ]);
  });
});

describe("validateLabelSelector", () => {
  it("checks operators and their values", () => {
    expect(
      text(
        validateLabelSelector(
          {
            matchLabels: { app: "web" },
            matchExpressions: [
              { key: "tier", operator: "In", values: [] },
              { key: "env", operator: "Exists", values: ["x"] },
              { key: "x", operator: "Like" },
            ],
          },
          "spec.selector",
        ),
      ),
    ).toEqual([
      "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
      "spec.selector.matchExpressions[1].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
      'spec.selector.matchExpressions[2].operator: Invalid value: "Like": not a valid selector operator',
    ]);
  });
});
