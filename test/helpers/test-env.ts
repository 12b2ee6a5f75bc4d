// The settings every test server runs with, in this process (server.ts) or as a child (process.ts).
// Only what no rule of the spec or the contract depends on: a test of a rule runs on the defaults,
// and a test that needs a setting changed sets it itself and says why.
export const TEST_ENV: Readonly<Record<string, string>> = {
  // A cheap hash: these tests check behaviour, not strength (the login bench uses the defaults).
  ARGON2_MEMORY_KIB: '64',
  ARGON2_ITERATIONS: '1',
}
