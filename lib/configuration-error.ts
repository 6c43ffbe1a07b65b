/**
 * A setting the operator has to change. Its message is the whole story (the setting, what is wrong with it,
 * what to do), so an entry logs it as one line and exits with EXIT_CODES.configuration, never a stack trace.
 */
export class ConfigurationError extends Error {
  override readonly name = "ConfigurationError";
}
