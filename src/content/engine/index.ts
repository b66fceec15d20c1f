// Public surface of the Engine client; the rest of the folder is internal.
export { createEngineClient } from './client'
export type { EngineClient, EngineClientOptions, EngineLog, EngineTimeouts, LogtestReply } from './client'
export { engineOptionsFromSettings } from './settings'
export { createPolicyReloader } from './reload-loader'
export type { PolicyReloader, PolicySource, ReloadOutcome } from './reload-loader'
export { EngineError, engineFailure, EngineRefused, EngineTimeout, EngineUnavailable, engineValidationMessage } from './errors'
export type { EngineReply } from './transport'
export * from './schemas'
