// Golden verdicts against Argo Rollouts' own code, always: builds hack/argo-oracle from the Go module
// proxy when it is not cached (about 6 minutes cold), then compares (test/argo/golden-suite.ts). Needs
// no cluster.
import { goldenSuite } from '../argo/golden-suite.js';
import { oracle } from '../argo/golden.js';

describe('Argo analysis golden verdicts', () => {
  goldenSuite(() => oracle(false));
});
