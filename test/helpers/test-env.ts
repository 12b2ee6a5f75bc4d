// The settings every test server runs with, in this process (server.ts) or as a child (process.ts).
export const TEST_ENV: Readonly<Record<string, string>> = {
  // A cheap hash: these tests check behaviour, not strength (the login bench uses the defaults).
  ARGON2_MEMORY_KIB: '64',
  ARGON2_ITERATIONS: '1',
  // Many tests create more links at once than an account may a minute (LINK_CREATE_PER_MINUTE);
  // the tests of that limit set it themselves ('' is the default).
  LINK_CREATE_PER_MINUTE: '100000',
}
