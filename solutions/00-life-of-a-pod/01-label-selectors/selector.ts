// The reference answer is the course's own code: the matching and the parser in
// code/api/labels.ts, which the API server, the controllers and the scheduler use.
// Read it there (regions requirement-matches, selector-matches, parse, parse-requirement,
// parse-values).
export { matches, parse, selectorMatches } from "../../../code/api/labels.ts";
