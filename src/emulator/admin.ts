// The admin API under /__emulator/: stats, reset, faults, the world and its objects. Never subject
// to faults or auth; it is a test harness, served on loopback.
import type { EmulatorFederation, EmulatorPolicyObject, EmulatorProject } from "../generated/schemas.js";
import { kindOfName, SEGMENT } from "../gcp/object-kinds.js";
import { validate } from "../schemas/index.js";
import { schemaProblem } from "./schema-errors.js";
import { parseJsonBody } from "./api.js";
import { ok, type EmulatorContext, type Reply } from "./context.js";
import { ApiError, invalidArgument, notFound } from "./errors.js";
import { faultProblem, type FaultConfig } from "./faults.js";
import { coerceSeed, objectProblem, WORLD_KINDS } from "./seed.js";

export const ADMIN_PREFIX = "/__emulator/";

function unknownRoute(method: string, path: string): ApiError {
  return notFound(
    `No admin route ${method} ${path}. Routes: GET stats, POST stats/reset, POST reset, ` +
      `GET|POST|DELETE faults, GET world, POST|DELETE objects, PUT projects/{id}.`,
  );
}

async function committed(ctx: EmulatorContext, reply: Reply): Promise<Reply> {
  await ctx.commit();
  return reply;
}

export function handleAdmin(
  ctx: EmulatorContext,
  method: string,
  path: string,
  query: URLSearchParams | undefined,
  body: Buffer | undefined,
): Reply | Promise<Reply> {
  const route = path.slice(ADMIN_PREFIX.length);
  switch (`${method} ${route}`) {
    case "GET stats":
      return ok(JSON.stringify(ctx.stats));
    case "POST stats/reset":
      ctx.stats.reset();
      return ok("{}");
    case "POST reset": {
      let world;
      try {
        world = ctx.loadSeed();
      } catch (e) {
        throw new ApiError("FAILED_PRECONDITION", `Cannot reload the seed: ${(e as Error).message}`, {
          reason: "SEED_INVALID",
        });
      }
      ctx.store.load(world);
      ctx.stats.reset();
      ctx.faults.clear();
      return committed(ctx, ok("{}"));
    }
    case "GET faults":
      return ok(JSON.stringify(ctx.faults.current()));
    case "POST faults": {
      const config = parseJsonBody(body);
      const problem = faultProblem(config);
      if (problem) throw invalidArgument(`Invalid fault configuration: ${problem}.`);
      ctx.faults.set(config as FaultConfig);
      return ok(JSON.stringify(ctx.faults.current()));
    }
    case "DELETE faults":
      ctx.faults.clear();
      return ok("{}");
    case "GET world":
      return ok(ctx.store.serialize());
    case "POST objects":
      return addObject(ctx, parseJsonBody(body));
    case "DELETE objects": {
      const name = query?.get("name");
      if (!name) throw invalidArgument("DELETE /__emulator/objects needs ?name=FULL_RESOURCE_NAME.", "name");
      const kind = kindOfName(name);
      if (!kind || !ctx.store.remove(kind, name)) throw notFound(`No object named '${name}'.`, name);
      return committed(ctx, ok("{}"));
    }
  }
  const project = /^projects\/([^/]+)$/.exec(route);
  if (project && method === "PUT") return putProject(ctx, project[1]!, parseJsonBody(body));
  throw unknownRoute(method, path);
}

function addObject(ctx: EmulatorContext, body: Record<string, unknown>): Promise<Reply> {
  const { kind, ...object } = body;
  const world = WORLD_KINDS.find((w) => w.kind === kind);
  if (!world) throw invalidArgument(`"kind" must be one of ${WORLD_KINDS.map((w) => w.kind).join(", ")}.`, "kind");
  const k = world.kind;
  coerceSeed({ [world.key]: [object] });
  const problem = objectProblem(k, object);
  if (problem) throw invalidArgument(`Invalid ${k}: ${problem}.`);
  const obj = ctx.store.upsert(k, object as unknown as EmulatorPolicyObject | EmulatorFederation);
  return committed(ctx, ok(ctx.store.objectJson(obj)));
}

function putProject(ctx: EmulatorContext, id: string, body: Record<string, unknown>): Promise<Reply> {
  if (!SEGMENT.test(id)) throw invalidArgument(`"${id}" is not a project ID.`);
  if (ctx.store.projectId(id) !== id)
    throw invalidArgument(`"${id}" is the number of project ${ctx.store.projectId(id)}.`);
  coerceSeed({ projects: { [id]: body } });
  const errors = validate("emulator-seed.schema.json#/definitions/EmulatorProject", body);
  if (errors.length > 0) throw invalidArgument(`Invalid project ${id}: ${schemaProblem(errors)}.`);
  const config = body as EmulatorProject;
  if (config.number) {
    const owner = ctx.store.projectId(config.number);
    if (owner !== config.number && owner !== id)
      throw invalidArgument(`Project number ${config.number} already belongs to project ${owner}.`);
    if (owner === config.number && config.number !== id && ctx.store.project(config.number)) {
      throw invalidArgument(`Project number ${config.number} is the ID of another project.`);
    }
  }
  ctx.store.setProject(id, config);
  return committed(ctx, ok(JSON.stringify(config)));
}
