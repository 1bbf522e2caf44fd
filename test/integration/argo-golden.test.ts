// Golden verdicts against Argo Rollouts' own code, when the oracle's binary is already built (the
// end-to-end suite builds it: test/e2e/argo-golden.test.ts). Without it this suite is reported as
// skipped, never as passed.
import { goldenSuite } from '../argo/golden-suite.js';
import { oracle } from '../argo/golden.js';

const bin = oracle(true);
(bin ? describe : describe.skip)(`Argo analysis golden verdicts${bin ? '' : ' (skipped: the oracle is not built; bash hack/argo-oracle.sh builds it)'}`, () => {
  goldenSuite(() => bin);
});
