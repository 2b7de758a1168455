// Injection tokens of querylib/nest.
/** The module options as forRoot or forRootAsync's factory gave them (before the `admin` extra is merged). */
export const QUERYLIB_OPTIONS_INPUT = Symbol.for("querylib.nest.moduleOptionsInput");
/** The module options the runtime reads. */
export const QUERYLIB_MODULE_OPTIONS = Symbol.for("querylib.nest.moduleOptions");
export const QP_RUNTIME = Symbol.for("querylib.nest.runtime");
