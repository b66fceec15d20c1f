/**
 * Tasks of requests run with `wait_for_completion=false` (the by-query writes): their status
 * while they run and their response once done, readable at `GET _tasks/<id>` by the caller that
 * started them. Finished tasks are kept in memory, the oldest dropped past MAX_FINISHED_TASKS.
 */
import { OpenSearchHttpError } from '../http/errors'
import type { RequestContext } from './context'
import { nodeIdOf } from './node-info'
import type { IndexRouter } from './router'

export const TASK_ACTIONS = { get: 'cluster:monitor/task/get', list: 'cluster:monitor/tasks/lists' } as const
/** Finished tasks kept for `GET _tasks/<id>` (OpenSearch keeps them in its `.tasks` index). */
export const MAX_FINISHED_TASKS = 1000

export interface Task {
  id: string
  owner: string
  action: string
  description: string
  started: number
  status: () => Record<string, unknown>
  done: boolean
  response?: unknown
  error?: unknown
}

interface Registry {
  next: number
  tasks: Map<string, Task>
}

const registries = new WeakMap<object, Registry>()
function registryOf(ctx: RequestContext): Registry {
  let r = registries.get(ctx.deps)
  if (!r) registries.set(ctx.deps, (r = { next: 1, tasks: new Map() }))
  return r
}

/** Starts `run` in the background as a task of the caller; answers its id. */
export function startTask(
  ctx: RequestContext,
  action: string,
  description: string,
  status: () => Record<string, unknown>,
  run: () => Promise<unknown>,
  toError: (e: unknown) => unknown,
): string {
  const reg = registryOf(ctx)
  const id = `${nodeIdOf(ctx)}:${reg.next++}`
  const task: Task = { id, owner: ctx.caller.name, action, description, started: ctx.deps.now(), status, done: false }
  reg.tasks.set(id, task)
  run().then(
    (response) => {
      task.response = response
      task.done = true
      prune(reg)
    },
    (e) => {
      task.error = toError(e)
      task.done = true
      prune(reg)
    },
  )
  return id
}

function prune(reg: Registry): void {
  const finished = [...reg.tasks.values()].filter((t) => t.done)
  for (const t of finished.slice(0, Math.max(0, finished.length - MAX_FINISHED_TASKS))) reg.tasks.delete(t.id)
}

function taskInfo(ctx: RequestContext, t: Task): Record<string, unknown> {
  const [node, n] = t.id.split(':')
  return {
    node,
    id: Number(n),
    type: 'transport',
    action: t.action,
    status: t.status(),
    description: t.description,
    start_time_in_millis: t.started,
    running_time_in_nanos: (ctx.deps.now() - t.started) * 1_000_000,
    cancellable: true,
    cancelled: false,
    headers: {},
  }
}

async function getTask(ctx: RequestContext) {
  await ctx.authorizeCluster(TASK_ACTIONS.get)
  const id = ctx.part('task_id')!
  const t = registryOf(ctx).tasks.get(id)
  // Another user's task is answered as missing: its description names indices and queries.
  if (!t || t.owner !== ctx.caller.name)
    throw new OpenSearchHttpError(404, 'resource_not_found_exception', `task [${id}] isn't running and hasn't stored its results`)
  return {
    completed: t.done,
    task: taskInfo(ctx, t),
    ...(t.done && t.error === undefined ? { response: t.response } : {}),
    ...(t.error !== undefined ? { error: t.error } : {}),
  }
}

async function listTasks(ctx: RequestContext) {
  await ctx.authorizeCluster(TASK_ACTIONS.list)
  const mine = [...registryOf(ctx).tasks.values()].filter((t) => !t.done && t.owner === ctx.caller.name)
  const node = nodeIdOf(ctx)
  return {
    nodes: {
      [node]: {
        name: String(ctx.deps.node.values.get('node.name')),
        roles: ['cluster_manager', 'data', 'ingest'],
        tasks: Object.fromEntries(mine.map((t) => [t.id, taskInfo(ctx, t)])),
      },
    },
  }
}

export function taskRoutes(r: IndexRouter): void {
  r.on('GET', '/_tasks/:task_id', getTask)
  r.on('GET', '/_tasks', listTasks)
}
