// The Engine settings are node settings (not dynamic), so the client is built once at start-up.
import type { SettingsSnapshot } from '../../config/cluster-settings'
import type { EngineClientOptions, EngineLog } from './client'

/** Client options from the effective settings, so callers never spell the setting names. */
export function engineOptionsFromSettings(settings: Pick<SettingsSnapshot, 'str' | 'bool' | 'num'>, log: EngineLog): EngineClientOptions {
  return {
    socketPath: settings.str('plugins.content_manager.engine.socket_path'),
    mock: settings.bool('plugins.content_manager.engine.mock'),
    reloadTimeoutMinutes: settings.num('plugins.content_manager.engine.reload_timeout_minutes'),
    notReadyGraceMinutes: settings.num('plugins.content_manager.engine.not_ready_grace_minutes'),
    log,
  }
}
