// The reference answer is the course's own code: the matching in code/api/labels.ts and the
// parser in code/api/label-selector-parser.ts, which the API server, the controllers and the
// scheduler use. Read them there (regions requirement-matches, selector-matches; parse,
// parse-requirement, parse-values).
export { parse } from "../../../code/api/label-selector-parser.ts";
export { matches, selectorMatches } from "../../../code/api/labels.ts";
