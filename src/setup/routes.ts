import type { Deps } from '../deps'
import { SMALL_BODY } from '../http/body'
import { envelope } from '../http/errors'
import type { TObject } from '@sinclair/typebox'
import { route, type Method, type PluginRoute, type RouteBody } from '../http/route'
import { SETUP_ACTIONS } from '../security/actions'
import { AssistantService, PROVIDER_MESSAGES } from './ai-assistant/service'
import { AssistantSettings, NewProvider, Provider } from './ai-assistant/validate'
import { readObjectBody, SESSION_LIMIT } from './sessions/body'
import { ownerOf } from './sessions/owner'
import { SessionService } from './sessions/service'
import { CreateSessionBody, RenameSessionBody, ReplaceSessionBody } from './sessions/validate'
import { SettingsRecord, updateSetupSettings } from './settings'

const BASE = '/_plugins/_setup'
const AI = `${BASE}/ai_assistant`

export interface SetupServices {
  sessions: SessionService
  assistant: AssistantService
}

export function setupServices(deps: Pick<Deps, 'store' | 'settings' | 'now' | 'nodeLocalStore'>): SetupServices {
  return { sessions: new SessionService(deps), assistant: new AssistantService(deps) }
}

/** Every route of the Setup extension; authorization of each action happens before the handler. */
export function setupRoutes(deps: Deps, services: SetupServices = setupServices(deps)): PluginRoute[] {
  const { sessions, assistant } = services
  // Settings and provider documents are small: the default plugin limit (413) applies; sessions have their own 400.
  const readAssistant = (request: Request) => readObjectBody(request, SMALL_BODY)
  const small = (schema: RouteBody['schema']): RouteBody => ({ limit: SMALL_BODY, schema })
  // The session writes: the caller's own sessions, a JSON object under the session body limit.
  const sessionWrite = (
    method: Method,
    path: string,
    schema: TObject,
    write: (owner: string, id: string | undefined, body: Record<string, unknown>) => Promise<unknown>,
  ) =>
    route(
      method,
      path,
      SETUP_ACTIONS.sessionWrite,
      async ({ request, caller, params }) => write(ownerOf(caller), params.id, await readObjectBody(request)),
      { limit: SESSION_LIMIT, schema },
    )

  return [
    route(
      'PUT',
      `${BASE}/settings`,
      SETUP_ACTIONS.settingsUpdate,
      ({ request, caller }) => updateSetupSettings(deps, caller, request),
      small(SettingsRecord),
    ),

    sessionWrite('POST', `${AI}/sessions`, CreateSessionBody, (owner, _id, body) => sessions.create(owner, body)),
    sessionWrite('PUT', `${AI}/sessions/:id`, ReplaceSessionBody, (owner, id, body) => sessions.replace(owner, id, body)),
    sessionWrite('PATCH', `${AI}/sessions/:id`, RenameSessionBody, (owner, id, body) => sessions.rename(owner, id, body)),
    route('DELETE', `${AI}/sessions/:id`, SETUP_ACTIONS.sessionWrite, async ({ caller, params }) => {
      const { id } = await sessions.delete(ownerOf(caller), params.id)
      return envelope(200, 'Session deleted.', { id })
    }),

    route('GET', `${AI}/settings`, SETUP_ACTIONS.aiSettingsRead, () => assistant.getSettings()),
    route(
      'PUT',
      `${AI}/settings`,
      SETUP_ACTIONS.aiSettingsWrite,
      async ({ request }) => {
        await assistant.putSettings(await readAssistant(request))
        return envelope(200, 'Settings updated.')
      },
      small(AssistantSettings),
    ),
    route('GET', `${AI}/providers`, SETUP_ACTIONS.aiSettingsRead, async () => ({ providers: await assistant.listProviders() })),
    route(
      'POST',
      `${AI}/providers`,
      SETUP_ACTIONS.aiSettingsWrite,
      async ({ request }) => {
        const id = await assistant.createProvider(await readAssistant(request))
        return envelope(200, PROVIDER_MESSAGES.saved, { id })
      },
      small(NewProvider),
    ),
    route(
      'PUT',
      `${AI}/providers/:id`,
      SETUP_ACTIONS.aiSettingsWrite,
      async ({ request, params }) => {
        const id = await assistant.putProvider(params.id, await readAssistant(request))
        return envelope(200, PROVIDER_MESSAGES.saved, { id })
      },
      small(Provider),
    ),
    route('DELETE', `${AI}/providers/:id`, SETUP_ACTIONS.aiSettingsWrite, async ({ params }) => {
      const id = await assistant.deleteProvider(params.id)
      return envelope(200, PROVIDER_MESSAGES.deleted, { id })
    }),
  ]
}
