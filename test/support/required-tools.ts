/**
 * Tools a run requires (`SVC_TEST_REQUIRE=chromium,jq`, set by .ci/run, which installs them): a test that would
 * skip for want of one fails instead, so CI never passes by skipping. On a developer's machine nothing is required.
 */
export function required(tool: string): boolean {
  return (process.env['SVC_TEST_REQUIRE'] ?? '').split(',').map((t) => t.trim()).includes(tool);
}
