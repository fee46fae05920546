export {
  defaultSessionLogDir,
  listSessionLogs,
  parseSessionLog,
  readSessionLog,
  SESSION_LOG_VERSION,
  type SessionLog,
  type SessionLogEntry,
  type SessionLogHeader,
  type SessionLogTrailer,
  SessionLogWriter,
  type SessionLogWriterOptions,
  writeSessionLog,
} from "./session-log.js";
