// Mistake: each line is split on commas. Plausible because it is "comma-separated values"; but the
// groups column is quoted precisely because it holds commas — `abc,bob,1002,"dev,ops"` gives bob
// the groups `"dev` and nothing, with `ops"` lost in a fifth column.
import { reference, tokenFileWith } from "./token-file.ts";

export const { parseTokenFile, authenticateBearer } = tokenFileWith({
  ...reference,
  records: (text) =>
    text
      .split(/\r?\n/)
      .filter((line) => line !== "")
      .map((line) => line.split(",")),
});
