/**
 * Volume validation — a pod's `volumes`: each named, unique, and with exactly one source
 * (emptyDir, configMap, secret, persistentVolumeClaim, …). Upstream does the same in
 * pkg/apis/core/validation/validation.go (ValidateVolumes).
 *
 * Solves:
 * - containers mount volumes by name: validating the volumes first yields the names a mount may
 *   use, so a mount of a missing or broken volume is reported where it is written.
 *
 * Simplified: only the common sources are checked inside (hostPath, secret, configMap,
 * persistentVolumeClaim); the others are only counted, to refuse a volume with two sources.
 *
 * @upstream kubernetes/kubernetes pkg/apis/core/validation/validation.go (ValidateVolumes, validateVolumeSource, validateKeyToPath, validateSecretVolumeSource, validateConfigMapVolumeSource)
 * @chapter 02-apiserver
 */

import {
  childPath,
  duplicate,
  type FieldError,
  forbidden,
  indexPath,
  invalid,
  required,
} from "./field-errors.ts";
import { arr, type JSONObject, obj, str } from "./json.ts";
import { isDNS1123Label } from "./string-validation.ts";

/**
 * The volume sources in the order upstream checks them, with the path upstream reports a
 * second source under — including its typos (`downwarAPI`) and spellings (`cephFS`).
 */
const VOLUME_SOURCES: readonly [json: string, reportedAs: string][] = [
  ["emptyDir", "emptyDir"],
  ["hostPath", "hostPath"],
  ["gitRepo", "gitRepo"],
  ["gcePersistentDisk", "gcePersistentDisk"],
  ["awsElasticBlockStore", "awsElasticBlockStore"],
  ["secret", "secret"],
  ["nfs", "nfs"],
  ["iscsi", "iscsi"],
  ["glusterfs", "glusterfs"],
  ["flocker", "flocker"],
  ["persistentVolumeClaim", "persistentVolumeClaim"],
  ["rbd", "rbd"],
  ["cinder", "cinder"],
  ["cephfs", "cephFS"],
  ["quobyte", "quobyte"],
  ["downwardAPI", "downwarAPI"],
  ["fc", "fc"],
  ["flexVolume", "flexVolume"],
  ["configMap", "configMap"],
  ["azureFile", "azureFile"],
  ["vsphereVolume", "vsphereVolume"],
  ["photonPersistentDisk", "photonPersistentDisk"],
  ["portworxVolume", "portworxVolume"],
  ["azureDisk", "azureDisk"],
  ["storageos", "storageos"],
  ["projected", "projected"],
  ["scaleIO", "scaleIO"],
  ["csi", "csi"],
  ["ephemeral", "ephemeral"],
  ["image", "image"],
];

const FILE_MODE_ERROR_MSG = "must be a number between 0 and 0777 (octal), both inclusive";

/** The `items` of a secret or configMap volume: which key becomes which file, with a valid file mode. */
function validateKeyToPaths(items: unknown, path: string): FieldError[] {
  const errors: FieldError[] = [];
  arr(items).forEach((entry, i) => {
    const item = obj(entry) ?? {};
    const at = indexPath(path, i);
    if (str(item.key) === "") errors.push(required(childPath(at, "key")));
    if (str(item.path) === "") errors.push(required(childPath(at, "path")));
    const mode = item.mode;
    if (typeof mode === "number" && (mode > 0o777 || mode < 0))
      errors.push(invalid(childPath(at, "mode"), mode, FILE_MODE_ERROR_MSG));
  });
  return errors;
}

/**
 * validateVolumeSource: exactly one source. Every source is looked at, so a volume with three
 * sources gets two "may not specify more than 1 volume type" errors, each at the later source.
 */
function validateVolumeSource(volume: JSONObject, path: string): FieldError[] {
  const errors: FieldError[] = [];
  let sources = 0;
  for (const [json, reportedAs] of VOLUME_SOURCES) {
    const source = obj(volume[json]);
    if (!source) continue;
    if (sources > 0) {
      errors.push(forbidden(childPath(path, reportedAs), "may not specify more than 1 volume type"));
      continue;
    }
    sources++;
    const at = childPath(path, json);
    if (json === "hostPath" && str(source.path) === "") errors.push(required(childPath(at, "path")));
    if (json === "secret" || json === "configMap") {
      const nameField = json === "secret" ? "secretName" : "name";
      if (str(source[nameField]) === "") errors.push(required(childPath(at, nameField)));
      const mode = source.defaultMode;
      if (typeof mode === "number" && (mode > 0o777 || mode < 0)) {
        errors.push(invalid(childPath(at, "defaultMode"), mode, FILE_MODE_ERROR_MSG));
      }
      errors.push(...validateKeyToPaths(source.items, childPath(at, "items")));
    }
    if (json === "persistentVolumeClaim" && str(source.claimName) === "")
      errors.push(required(childPath(at, "claimName")));
  }
  if (sources === 0) errors.push(required(path, "must specify a volume type"));
  return errors;
}

/** ValidateVolumes: named (DNS label), unique, exactly one source each; returns the usable names. */
export function validateVolumes(
  volumes: unknown,
  path: string,
): { names: Set<string>; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const names = new Set<string>();
  arr(volumes).forEach((entry, i) => {
    const volume = obj(entry) ?? {};
    const at = indexPath(path, i);
    const name = str(volume.name);
    const volumeErrors = validateVolumeSource(volume, at);
    if (name === "") volumeErrors.push(required(childPath(at, "name")));
    else for (const m of isDNS1123Label(name)) volumeErrors.push(invalid(childPath(at, "name"), name, m));
    if (names.has(name)) volumeErrors.push(duplicate(childPath(at, "name"), name));
    // A broken volume is not mountable: mounts that name it get "Not found" too, as upstream.
    if (volumeErrors.length === 0) names.add(name);
    else errors.push(...volumeErrors);
  });
  return { names, errors };
}
