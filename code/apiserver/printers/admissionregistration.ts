/**
 * admissionregistration.k8s.io/v1 tables: mutatingwebhookconfigurations and
 * validatingwebhookconfigurations (NAME WEBHOOKS AGE). Upstream: printMutatingWebhook and
 * printValidatingWebhook in pkg/printers/internalversion/printers.go.
 *
 * Solves: `kubectl get mutatingwebhookconfigurations` shows how many webhooks each
 * configuration holds — the count is what tells a reader "this one calls out for every pod".
 *
 * Invariants: WEBHOOKS is an integer cell, 0 for a configuration without webhooks.
 *
 * @upstream kubernetes/kubernetes pkg/printers/internalversion/printers.go (printMutatingWebhook, printValidatingWebhook)
 * @chapter 03-api-security
 */
import type { MutatingWebhookConfiguration } from "../../api/admissionregistration.ts";
import type { KubeObject } from "../../api/meta.ts";
import { ageColumn, column, nameColumn, translateTimestampSince } from "./helpers.ts";
import type { TablePrinter } from "./table.ts";

const webhookConfigurationPrinter: TablePrinter = {
  columns: [
    nameColumn,
    column("Webhooks", "integer", "Webhooks indicates the number of webhooks."),
    ageColumn,
  ],
  print: (obj: KubeObject, now) => {
    const config = obj as MutatingWebhookConfiguration;
    return {
      cells: [
        config.metadata.name ?? "",
        config.webhooks?.length ?? 0,
        translateTimestampSince(config.metadata.creationTimestamp, now),
      ],
    };
  },
};

export const admissionRegistrationPrinters: Readonly<Record<string, TablePrinter>> = {
  mutatingwebhookconfigurations: webhookConfigurationPrinter,
  validatingwebhookconfigurations: webhookConfigurationPrinter,
};
