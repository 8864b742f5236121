import { it } from 'vitest';
import { checkPointsConserved } from './ledger-property.ts';

// A few random sequences on every run; npm run test:slow (ledger.soak.ts) runs many more.
it('never creates or loses points, whatever is submitted, canceled, stepped or left to the clock', async () => {
  await checkPointsConserved(8);
});
