import type { Deps } from '../deps'
import { SMALL_BODY } from '../http/body'
import { envelope } from '../http/errors'
import type { Static, TObject } from '@sinclair/typebox'
import { objectBody, route, type Method, type PluginRoute } from '../http/route'
import { SETUP_ACTIONS } from '../security/actions'
import { AssistantService, PROVIDER_MESSAGES } from './ai-assistant/service'
import { AssistantSettings, NewProvider, newProvider, pickSettings, Provider, validProvider } from './ai-assistant/validate'
import { EMPTY_BODY, SESSION_LIMIT } from './sessions/body'
import { ownerOf } from './sessions/owner'
import { SessionService } from './sessions/service'
import { CreateSessionBody, RenameSessionBody, ReplaceSessionBody } from './sessions/validate'
import { SETTINGS_BODY, settingsUpdatesEnabled, updateSetupSettings } from './settings'

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
  // The assistant's documents are checked field by field with the reference's words (validate.ts).
  const assistantBody = <S extends TObject, T>(schema: S, parse: (body: Record<string, unknown>) => T) =>
    objectBody(SMALL_BODY, schema, { empty: EMPTY_BODY, parse: (v) => parse(v as Record<string, unknown>) })
  // The session writes: the caller's own sessions, a JSON object under the session body limit.
  const sessionWrite = <S extends TObject>(
    method: Method,
    path: string,
    schema: S,
    write: (owner: string, id: string | undefined, body: Static<S>) => Promise<unknown>,
  ) =>
    route(
      method,
      path,
      SETUP_ACTIONS.sessionWrite,
      async ({ caller, params, body }) => write(ownerOf(caller), params.id, body),
      objectBody(SESSION_LIMIT, schema, { empty: EMPTY_BODY }),
    )

  return [
    {
      ...route(
        'PUT',
        `${BASE}/settings`,
        SETUP_ACTIONS.settingsUpdate,
        ({ caller, body }) => updateSetupSettings(deps, caller, body),
        SETTINGS_BODY,
      ),
      before: () => settingsUpdatesEnabled(deps),
    },

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
      async ({ body }) => {
        await assistant.putSettings(body)
        return envelope(200, 'Settings updated.')
      },
      assistantBody(AssistantSettings, pickSettings),
    ),
    route('GET', `${AI}/providers`, SETUP_ACTIONS.aiSettingsRead, async () => ({ providers: await assistant.listProviders() })),
    route(
      'POST',
      `${AI}/providers`,
      SETUP_ACTIONS.aiSettingsWrite,
      async ({ body }) => {
        const id = await assistant.createProvider(body)
        return envelope(200, PROVIDER_MESSAGES.saved, { id })
      },
      assistantBody(NewProvider, newProvider),
    ),
    route(
      'PUT',
      `${AI}/providers/:id`,
      SETUP_ACTIONS.aiSettingsWrite,
      async ({ params, body }) => {
        const id = await assistant.putProvider(params.id, body)
        return envelope(200, PROVIDER_MESSAGES.saved, { id })
      },
      assistantBody(Provider, validProvider),
    ),
    route('DELETE', `${AI}/providers/:id`, SETUP_ACTIONS.aiSettingsWrite, async ({ params }) => {
      const id = await assistant.deleteProvider(params.id)
      return envelope(200, PROVIDER_MESSAGES.deleted, { id })
    }),
  ]
}
