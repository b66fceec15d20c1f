import { Type as T, type Static } from '@sinclair/typebox'

/**
 * Shapes of the four security files, in the platform security plugin's
 * formats (config_version 2). Unknown fields are rejected so a typo such as
 * `cluster_permission` fails the load instead of silently granting less (or
 * more) than intended. `_meta` and the bookkeeping flags are accepted.
 */

const Flags = {
  reserved: T.Optional(T.Boolean()),
  hidden: T.Optional(T.Boolean()),
  static: T.Optional(T.Boolean()),
  description: T.Optional(T.String()),
}

const Strings = T.Array(T.String())

export const Meta = T.Object({ type: T.String(), config_version: T.Integer() }, { additionalProperties: false })

export const InternalUser = T.Object(
  {
    hash: T.String({ minLength: 1 }),
    backend_roles: T.Optional(Strings),
    attributes: T.Optional(T.Record(T.String(), T.Union([T.String(), T.Number(), T.Boolean()]))),
    /** Roles assigned directly to the user, without roles_mapping (the platform's field name). */
    opendistro_security_roles: T.Optional(Strings),
    ...Flags,
  },
  { additionalProperties: false },
)
export type InternalUser = Static<typeof InternalUser>

export const IndexPermission = T.Object(
  {
    index_patterns: Strings,
    allowed_actions: T.Optional(Strings),
    /** A query DSL document as JSON text; `${user.name}` and friends are substituted per caller. */
    dls: T.Optional(T.String()),
    /** Field-level security and masking are not implemented: only empty lists are accepted. */
    fls: T.Optional(T.Array(T.String(), { maxItems: 0 })),
    masked_fields: T.Optional(T.Array(T.String(), { maxItems: 0 })),
  },
  { additionalProperties: false },
)
export type IndexPermission = Static<typeof IndexPermission>

export const TenantPermission = T.Object(
  { tenant_patterns: T.Optional(Strings), allowed_actions: T.Optional(Strings) },
  { additionalProperties: false },
)

export const Role = T.Object(
  {
    cluster_permissions: T.Optional(Strings),
    index_permissions: T.Optional(T.Array(IndexPermission)),
    /** Tenants are a dashboard concept; accepted and ignored. */
    tenant_permissions: T.Optional(T.Array(TenantPermission)),
    ...Flags,
  },
  { additionalProperties: false },
)
export type Role = Static<typeof Role>

export const RoleMapping = T.Object(
  {
    users: T.Optional(Strings),
    backend_roles: T.Optional(Strings),
    and_backend_roles: T.Optional(Strings),
    hosts: T.Optional(Strings),
    ...Flags,
  },
  { additionalProperties: false },
)
export type RoleMapping = Static<typeof RoleMapping>

export const ActionGroup = T.Object(
  {
    allowed_actions: Strings,
    type: T.Optional(T.Union([T.Literal('cluster'), T.Literal('index'), T.Literal('all'), T.Literal('kibana')])),
    ...Flags,
  },
  { additionalProperties: false },
)
export type ActionGroup = Static<typeof ActionGroup>

/** The four files: name on disk, `_meta.type` the platform writes, and the entry shape. */
export const SECURITY_FILES = {
  internalUsers: { file: 'internal_users.yml', metaType: 'internalusers', entry: InternalUser },
  roles: { file: 'roles.yml', metaType: 'roles', entry: Role },
  rolesMapping: { file: 'roles_mapping.yml', metaType: 'rolesmapping', entry: RoleMapping },
  actionGroups: { file: 'action_groups.yml', metaType: 'actiongroups', entry: ActionGroup },
} as const
