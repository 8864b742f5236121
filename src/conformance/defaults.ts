/** Points the suite may spend unless told otherwise (here, apart from the suite, for the CLI's help). */
export const DEFAULT_BUDGET = 200;
