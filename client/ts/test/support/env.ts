// The environment of the tests' child processes.

/** childEnv answers this process's environment, less the test runner's own variables, plus extra. */
export function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = { ...process.env, ...extra };
  delete env.NODE_TEST_CONTEXT; // else a child's stdout is taken for the runner's protocol
  return env;
}
