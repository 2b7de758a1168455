// The OpenAPI document of QueryLibModule.forFeature's routes (lib/openapi), for a host: served by
// the admin API (GET {admin prefix}/openapi, for front-end generators), and merged into the
// document @nestjs/swagger builds from the host's own controllers, so one Swagger UI shows both:
//
//   const document = mergeQueryLibOpenApi(SwaggerModule.createDocument(app, config), app);
//   SwaggerModule.setup("docs", app, document);
//
// @nestjs/swagger stays optional: nothing here imports it (the feature controllers only carry the
// metadata key its scanner reads to leave them out, since their schemas are QueryLib's).
import type { INestApplicationContext } from "@nestjs/common";
import { type QpOpenApiDocument, openApiDocumentOf } from "../lib/openapi/document.js";
import type { QpRuntime } from "./runtime.js";
import { QP_RUNTIME } from "./tokens.js";

export type { QpOpenApiDocument };

export interface QpOpenApiOptions {
  /** The application's global prefix (app.setGlobalPrefix), if any: Nest does not tell it back. */
  readonly globalPrefix?: string;
}

/** QueryLib's document for this runtime's mounted entity routes. */
export function openApiDocumentOfRuntime(runtime: QpRuntime, options: QpOpenApiOptions = {}): QpOpenApiDocument {
  return openApiDocumentOf(runtime.features, runtime.engine.options.caps, options.globalPrefix ?? "");
}

/** QueryLib's document of an application (after app.init() or listen(): the routes register at startup). */
export function queryLibOpenApiDocument(app: INestApplicationContext, options: QpOpenApiOptions = {}): QpOpenApiDocument {
  return openApiDocumentOfRuntime(app.get<QpRuntime>(QP_RUNTIME, { strict: false }), options);
}

/**
 * Adds QueryLib's paths and schemas to a document @nestjs/swagger made (any object of that form).
 * The result is OpenAPI 3.1, which QueryLib's schemas use (`type: [..., "null"]`, `const`).
 */
export function mergeQueryLibOpenApi<D extends { openapi?: string; paths?: object; components?: { schemas?: object } }>(
  document: D, app: INestApplicationContext, options: QpOpenApiOptions = {},
): D {
  const ours = queryLibOpenApiDocument(app, options);
  return {
    ...document,
    openapi: ours.openapi,
    paths: { ...document.paths, ...ours.paths },
    components: { ...document.components, schemas: { ...document.components?.schemas, ...ours.components.schemas } },
  };
}
