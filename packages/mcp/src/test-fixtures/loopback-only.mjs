// Preloaded (`node --import`) into third-party servers in tests: a `listen(port)` without a host
// binds every interface; this makes it bind 127.0.0.1, so tests never open a port beyond loopback.
import net from "node:net";

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const first = args[0];
  const isPort = typeof first === "number" || (typeof first === "string" && /^\d+$/.test(first));
  if (isPort && typeof args[1] !== "string") args.splice(1, 0, "127.0.0.1");
  return listen.apply(this, args);
};
