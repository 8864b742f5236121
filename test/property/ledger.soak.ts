import { it } from 'vitest';
import { checkPointsConserved } from './ledger-property.ts';

// npm run test:slow: the points property of ledger.property.test.ts over many more random sequences.
it('never creates or loses points over 60 random sequences of submits, cancels, control steps and clock advances', async () => {
  await checkPointsConserved(60);
});
