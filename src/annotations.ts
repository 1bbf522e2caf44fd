// The annotation contract of SPEC §2: every key, default, range and message lives here, and both the
// webhook and the controller parse through `parseAnnotations` so they can never disagree on a default.
//
// This file is the façade: it re-exports the public API of src/annotations/, where the code lives by
// area (one reason to change each):
//   keys.ts             PREFIX, KEYS, the key prefixes of named gates, the integer bounds and limits
//   types.ts            RolloutConfig, Step, CompareTemplate, Problem, OptIn, ParseResult
//   values.ts           readers of single values: booleans, integers, the Prometheus URL, Secret names;
//                       formatProblems
//   gates.ts            query, HTTP and comparison gates, dry-run, gate policy references
//   rollout-control.ts  steps, promote, abort, retry, on-failure, the rollout group
//   parse.ts            readOptIn, parseAnnotations (and its memo), the unknown-key check
// keys.ts and types.ts are the bottom; parse.ts the top; nothing there imports this file.

export { COMPARE_PREFIX, GATE_NAME, HTTP_PREFIX, INTEGER_BOUNDS, KEYS, MAX_GATES, MAX_POLICY_REFS, MAX_QUERY_LENGTH, MAX_STEPS, PREFIX, QUERY_PREFIX } from './annotations/keys.js';
export type { CompareTemplate, OptIn, ParseResult, Problem, RolloutConfig, Step } from './annotations/types.js';
export { formatProblems } from './annotations/values.js';
export { compareQueryProblem, queryProblem } from './annotations/gates.js';
export { parseAnnotations, readOptIn } from './annotations/parse.js';
