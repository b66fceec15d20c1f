import type { Role, RoleMapping } from './config-schema'

export const ALL_ACCESS = 'all_access'
export const AI_ASSISTANT_ROLE = 'svc_ai_assistant'

/** The sessions data stream and its backing indices (reference 6.2). */
export const SESSIONS_INDEX_PATTERNS = ['svc-ai-assistant-sessions*', '.ds-svc-ai-assistant-sessions-*']
export const SESSIONS_DLS = '{"term": {"user": "${user.name}"}}'

/**
 * The reserved roles of reference 6.2 plus the superuser. roles.yml cannot
 * redefine them (a load error says so): they carry the guarantees of the spec
 * (only all_access holds the sensitive actions, sessions are filtered for
 * everyone).
 */
export const BUILTIN_ROLES: Readonly<Record<string, Role>> = Object.freeze({
  [ALL_ACCESS]: {
    reserved: true,
    description: 'Superuser: every cluster and index action (system indices excepted).',
    cluster_permissions: ['*'],
    index_permissions: [{ index_patterns: ['*'], allowed_actions: ['*'] }],
  },
  [AI_ASSISTANT_ROLE]: {
    reserved: true,
    description: 'Every authenticated user: write own AI assistant sessions, read them back filtered to the caller.',
    cluster_permissions: ['plugin:svc/ai_assistant/session/write'],
    index_permissions: [{ index_patterns: SESSIONS_INDEX_PATTERNS, allowed_actions: ['read'], dls: SESSIONS_DLS }],
  },
  dashboard_server: {
    reserved: true,
    description: "The dashboard's internal server user.",
    cluster_permissions: ['cluster:admin/platform/notifications/configs/get'],
    index_permissions: [{ index_patterns: ['svc-*'], allowed_actions: ['read'] }],
  },
  svc_manager: {
    reserved: true,
    description: 'The manager service user.',
    cluster_permissions: ['cluster_composite_ops', 'indices:data/read/scroll/clear', 'cluster_monitor'],
    index_permissions: [
      { index_patterns: ['.svc-settings', '.svc-cti-consumers', 'svc-active-responses*', 'svc-threatintel-*'], allowed_actions: ['read'] },
      { index_patterns: ['svc-events-v5-*', 'svc-metrics-*'], allowed_actions: ['read', 'index'] },
      { index_patterns: ['svc-states-*', 'svc-agent-*'], allowed_actions: ['read', 'index', 'delete'] },
      { index_patterns: ['.svc-threatintel-vulnerabilities*', 'svc-threatintel-*'], allowed_actions: ['manage_point_in_time'] },
    ],
  },
})

/**
 * Built-in mappings; a role's entry in roles_mapping.yml replaces its built-in
 * mapping. all_access follows the platform's default (backend role `admin`,
 * which the first-start admin user carries); dashboard_server and svc_manager
 * are left for the operator to map to their service users.
 */
export const BUILTIN_MAPPINGS: Readonly<Record<string, RoleMapping>> = Object.freeze({
  [ALL_ACCESS]: { backend_roles: ['admin'] },
  [AI_ASSISTANT_ROLE]: { users: ['*'] },
})
