import protobuf from "protobufjs";
import { describe, expect, it } from "vitest";
import { isStatusError } from "../errors.ts";
import { FIELDS_V1, fullNameOf, goShape, messageFor, RAW_EXTENSION } from "../protobuf/registry.ts";
import { apiVersionOf, resources } from "../resources.ts";
import { decodeObject } from "./serializer.ts";

const decode = (body: unknown, apiVersion: string, kind: string, strict = true) =>
  decodeObject(
    Buffer.from(typeof body === "string" ? body : JSON.stringify(body)),
    "json",
    { apiVersion, kind },
    strict,
  );

function messageOf(body: unknown, apiVersion = "v1", kind = "Pod", format: "json" | "yaml" = "json"): string {
  try {
    decodeObject(
      Buffer.from(typeof body === "string" ? body : JSON.stringify(body)),
      format,
      { apiVersion, kind },
      true,
    );
  } catch (e) {
    if (isStatusError(e)) {
      expect(e.code).toBe(400);
      return e.message;
    }
    throw e;
  }
  return "decoded";
}

const pod = (spec: object) => ({ apiVersion: "v1", kind: "Pod", metadata: { name: "p" }, spec });
const prefix = 'Pod in version "v1" cannot be handled as a Pod: ';

describe("typed decoding: Go's encoding/json errors, wrapped as the create handler wraps them", () => {
  it("refuses a wrongly typed value at any depth, naming the Go struct, the field path and the type", () => {
    expect(messageOf(pod({ containers: [], terminationGracePeriodSeconds: "thirty" }))).toBe(
      `${prefix}json: cannot unmarshal string into Go struct field PodSpec.spec.terminationGracePeriodSeconds of type int64`,
    );
    expect(messageOf(pod({ containers: [{ name: "c", ports: [{ containerPort: "eighty" }] }] }))).toBe(
      `${prefix}json: cannot unmarshal string into Go struct field ContainerPort.spec.containers.ports.containerPort of type int32`,
    );
    expect(messageOf(pod({ containers: {} }))).toBe(
      `${prefix}json: cannot unmarshal object into Go struct field PodSpec.spec.containers of type []v1.Container`,
    );
    expect(messageOf(pod({ containers: ["nginx"] }))).toBe(
      `${prefix}json: cannot unmarshal string into Go struct field PodSpec.spec.containers of type v1.Container`,
    );
    expect(messageOf({ ...pod({}), spec: [] })).toBe(
      `${prefix}json: cannot unmarshal array into Go struct field Pod.spec of type v1.PodSpec`,
    );
    expect(messageOf(pod({ hostNetwork: "yes" }))).toBe(
      `${prefix}json: cannot unmarshal string into Go struct field PodSpec.spec.hostNetwork of type bool`,
    );
    expect(messageOf(pod({ nodeSelector: { disk: 1 } }))).toBe(
      `${prefix}json: cannot unmarshal number into Go struct field PodSpec.spec.nodeSelector of type string`,
    );
    expect(messageOf({ ...pod({}), metadata: { name: 5 } })).toBe(
      `${prefix}json: cannot unmarshal number into Go struct field ObjectMeta.metadata.name of type string`,
    );
  });

  it("reads integers as Go's strconv.ParseInt does: no fraction, no exponent, in range", () => {
    const grace = (text: string) =>
      messageOf(`{"kind":"Pod","apiVersion":"v1","spec":{"terminationGracePeriodSeconds":${text}}}`);
    expect(grace("30")).toBe("decoded");
    expect(grace("-0")).toBe("decoded");
    for (const bad of ["30.0", "3e1", "9223372036854775808", "1.5"]) {
      expect(grace(bad)).toBe(
        `${prefix}json: cannot unmarshal number ${bad} into Go struct field PodSpec.spec.terminationGracePeriodSeconds of type int64`,
      );
    }
    expect(messageOf(pod({ priority: 2 ** 31 }))).toBe(
      `${prefix}json: cannot unmarshal number 2147483648 into Go struct field PodSpec.spec.priority of type int32`,
    );
  });

  it("decodes IntOrString, Quantity, Time and base64 bytes with their own UnmarshalJSON's errors", () => {
    const svc = (targetPort: unknown) => ({
      apiVersion: "v1",
      kind: "Service",
      spec: { ports: [{ port: 80, targetPort }] },
    });
    expect(messageOf(svc("http"), "v1", "Service")).toBe("decoded");
    expect(messageOf(svc(8080), "v1", "Service")).toBe("decoded");
    expect(messageOf(svc(true), "v1", "Service")).toBe(
      'Service in version "v1" cannot be handled as a Service: json: cannot unmarshal bool into Go struct field ServicePort.spec.ports.targetPort of type int32',
    );
    const cpu = (v: unknown) => pod({ containers: [{ name: "c", resources: { limits: { cpu: v } } }] });
    expect(messageOf(cpu("100m"))).toBe("decoded");
    expect(messageOf(cpu(2))).toBe("decoded");
    for (const bad of [{}, [], true, "lots", ""]) {
      expect(messageOf(cpu(bad))).toBe(
        `${prefix}quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`,
      );
    }
    expect(messageOf(cpu("5mi"))).toBe(`${prefix}unable to parse quantity's suffix`);
    expect(messageOf({ ...pod({}), metadata: { creationTimestamp: "yesterday" } })).toBe(
      `${prefix}parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"`,
    );
    expect(messageOf({ ...pod({}), metadata: { creationTimestamp: "2024-02-30T00:00:00Z" } })).toBe(
      `${prefix}parsing time "2024-02-30T00:00:00Z": day out of range`,
    );
    expect(messageOf({ ...pod({}), metadata: { creationTimestamp: 5 } })).toBe(
      `${prefix}json: cannot unmarshal number into Go struct field ObjectMeta.metadata.creationTimestamp of type string`,
    );
    expect(messageOf({ kind: "Secret", apiVersion: "v1", data: { k: "!!!!" } }, "v1", "Secret")).toBe(
      'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 0',
    );
  });

  it("keeps the first type error, as Go's saveError does, but a Quantity's error stops decoding and wins", () => {
    expect(messageOf(pod({ hostNetwork: 1, hostPID: 1 }))).toContain("PodSpec.spec.hostNetwork of type bool");
    expect(
      messageOf(pod({ hostNetwork: 1, containers: [{ name: "c", resources: { limits: { cpu: {} } } }] })),
    ).toBe(
      `${prefix}quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`,
    );
  });

  it("reports unknown and duplicate fields with sigs.k8s.io/json's paths (indexes and map keys)", () => {
    const body =
      '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","name":"b","labels":{"x":"1","x":"2"}},' +
      '"spec":{"containers":[{"name":"c","imagePulPolicy":"Always"}],"foo":1}}';
    const decoded = decode(body, "v1", "Pod");
    expect(decoded.strictErrors).toEqual([
      'duplicate field "metadata.name"',
      'duplicate field "metadata.labels.x"',
      'unknown field "spec.containers[0].imagePulPolicy"',
      'unknown field "spec.foo"',
    ]);
    // Unknown fields are dropped, the last duplicate wins, as Go's decoder leaves them.
    expect(decoded.obj.metadata).toEqual({ name: "b", labels: { x: "2" } });
    expect(decoded.obj.spec).toEqual({ containers: [{ name: "c" }] });
    expect(decode(body, "v1", "Pod", false).strictErrors).toEqual([]);
  });

  it("answers a body that is not an object before any type: Interpret's anonymous struct", () => {
    expect(messageOf([{ kind: "Pod" }])).toMatch(
      /^the object provided is unrecognized \(must be of type Pod\): couldn't get version\/kind; json parse error: json: cannot unmarshal array into Go value of type struct \{ APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" \} \(5b7b22/,
    );
    expect(messageOf('{"kind": 5}')).toBe(
      `the object provided is unrecognized (must be of type Pod): couldn't get version/kind; json parse error: json: cannot unmarshal number into Go struct field .kind of type string ({"kind": 5})`,
    );
    expect(messageOf('{"kind":"Pod",}')).toBe(
      `the object provided is unrecognized (must be of type Pod): couldn't get version/kind; json parse error: invalid character '}' looking for beginning of object key string ({"kind":"Pod",})`,
    );
    expect(messageOf("[".repeat(20000))).toContain("json parse error: exceeded max depth (5b5b5b");
    expect(messageOf("")).toContain("unexpected end of JSON input (<empty>)");
  });

  it("reads YAML as JSON, and a key given twice is a strict error naming its line", () => {
    const yaml =
      "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n  name: b\nspec:\n  terminationGracePeriodSeconds: thirty\n";
    expect(messageOf(yaml, "v1", "Pod", "yaml")).toBe(
      `${prefix}json: cannot unmarshal string into Go struct field PodSpec.spec.terminationGracePeriodSeconds of type int64`,
    );
    const dup = decodeObject(
      Buffer.from(yaml.replace("thirty", "30")),
      "yaml",
      { apiVersion: "v1", kind: "Pod" },
      true,
    );
    expect(dup.strictErrors).toEqual(['yaml: unmarshal errors:\n  line 5: key "name" already set in map']);
    expect(dup.obj.metadata).toEqual({ name: "b" });
  });
});

// #region every-field
/**
 * A wrong JSON type for a field's Go type: a number where Go wants a string, a string where it
 * wants a number, a bool, a struct, a list or a map.
 */
function wrongValueFor(field: protobuf.Field): unknown {
  if (field.map) return [];
  if (field.repeated) return {};
  const sub = field.resolvedType instanceof protobuf.Type ? field.resolvedType : undefined;
  if (sub) {
    if (sub.name === "IntOrString") return true;
    if (sub.name === "Quantity") return {};
    return sub.name.endsWith("Time") ? 7 : "x"; // Time wants a JSON string
  }
  return field.type === "string" || field.type === "bytes" ? 7 : "x";
}

/** Every field path of a message, with the field, to a bounded depth (PodSpec ↔ PodTemplateSpec cannot loop). */
function* fieldPaths(
  t: protobuf.Type,
  path: string[] = [],
  seen: Set<string> = new Set(),
): Generator<{ path: string[]; field: protobuf.Field }> {
  if (seen.has(fullNameOf(t))) return;
  const inner = new Set(seen).add(fullNameOf(t));
  for (const field of t.fieldsArray) {
    const sub = field.resolvedType instanceof protobuf.Type ? field.resolvedType : undefined;
    if (goShape(field).inline && sub) {
      yield* fieldPaths(sub, path, inner);
      continue;
    }
    if (sub && (fullNameOf(sub) === RAW_EXTENSION || fullNameOf(sub) === FIELDS_V1)) continue; // any JSON
    yield { path: [...path, field.name], field };
    if (
      sub &&
      !field.map &&
      !field.repeated &&
      !["Time", "MicroTime", "IntOrString", "Quantity"].includes(sub.name)
    ) {
      yield* fieldPaths(sub, [...path, field.name], inner);
    }
  }
}

function objectAt(path: string[], value: unknown): Record<string, unknown> {
  let v = value;
  for (let i = path.length - 1; i >= 0; i--) v = { [path[i]]: v };
  return v as Record<string, unknown>;
}

describe("every typed field of every served kind is decoded against its type", () => {
  for (const r of resources) {
    const apiVersion = apiVersionOf(r);
    const t = messageFor(apiVersion, r.kind);
    if (!t) continue;
    it(`${r.kind}: a wrong JSON type in any field is a 400 decode error naming the field`, () => {
      let count = 0;
      for (const { path, field } of fieldPaths(t)) {
        const body = { apiVersion, kind: r.kind, ...objectAt(path, wrongValueFor(field)) };
        const message = messageOf(body, apiVersion, r.kind);
        const leaf = path[path.length - 1];
        expect(message, path.join(".")).toMatch(
          new RegExp(
            `^${r.kind} in version "${r.version}" cannot be handled as a ${r.kind}: (json: cannot unmarshal \\w+ into Go struct field \\w+\\.${path.join("\\.")} of type \\S+|quantities must match .*)$`,
          ),
        );
        expect(message, leaf).not.toBe("decoded");
        count++;
      }
      expect(count).toBeGreaterThan(3);
    });
  }
});
// #endregion every-field
