// The Engine settings are node settings (not dynamic), so the client is built once at start-up.
import type { SettingsSnapshot } from '../../config/cluster-settings'
import type { EngineClientOptions, EngineLog } from './client'

const key = (name: string) => `plugins.content_manager.engine.${name}`

/** Client options from the effective settings, so callers never spell the setting names. */
export function engineOptionsFromSettings(settings: Pick<SettingsSnapshot, 'str' | 'bool' | 'num'>, log: EngineLog): EngineClientOptions {
  return {
    socketPath: settings.str(key('socket_path')),
    mock: settings.bool(key('mock')),
    reloadTimeoutMinutes: settings.num(key('reload_timeout_minutes')),
    notReadyGraceMinutes: settings.num(key('not_ready_grace_minutes')),
    log,
  }
}
