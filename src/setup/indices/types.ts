import type { AliasDefinition, CreateIndexBody, IndexTemplateBody, Mappings } from '../../store/port'

/** A composable template as Setup puts it (always overwriting: `create = false`). */
export interface TemplateDef {
  name: string
  body: IndexTemplateBody
}

/** A plain index: its template is put, then the index is created if absent. */
export interface PlainIndexDef {
  kind: 'index'
  name: string
  template?: TemplateDef
  body: CreateIndexBody
}

/** A data stream: a `data_stream` template, then the stream. */
export interface DataStreamDef {
  kind: 'stream'
  name: string
  template: TemplateDef
  /** Id of the lifecycle policy (reference 1.5) that governs the stream. */
  policy?: string
}

/** A content alias with its live physical index `<alias>-a` as write index. */
export interface ContentIndexDef {
  kind: 'content'
  alias: string
  /** `<alias>-a`. */
  index: string
  template: TemplateDef
  body: CreateIndexBody
  aliasDefinition: AliasDefinition
}

export type SetupDef = PlainIndexDef | DataStreamDef | ContentIndexDef

export type { CreateIndexBody, IndexTemplateBody, Mappings }
