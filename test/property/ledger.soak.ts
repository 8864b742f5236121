import { it } from 'vitest';
import { busier } from '../support/busy.ts';
import { checkPointsConserved } from './ledger-property.ts';

// npm run test:slow: the points property of ledger.property.test.ts over many more random sequences.
it('never creates or loses points over 60 random sequences of submits, cancels, control steps and clock advances', async () => {
  await checkPointsConserved(60);
  // 60 sequences take 40 to 65 s on 2 cores with other work beside them: the suite's 60 s would fail a busy run.
}, 180_000 * busier);
