/**
 * A module to preload (`node --import LOOPBACK_ONLY ...`) into third-party servers the tests start
 * (server-everything, supergateway) that call `listen(port)` and so bind every interface: it pins
 * their listening sockets to 127.0.0.1, because tests stay on loopback.
 */
export const LOOPBACK_ONLY = `data:text/javascript,${encodeURIComponent(`
import net from "node:net";
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (port, ...rest) {
  if (typeof port === "number" || (typeof port === "string" && /^[0-9]+$/.test(port))) {
    return listen.call(this, Number(port), "127.0.0.1", ...rest.filter((arg) => typeof arg === "function"));
  }
  return listen.call(this, port, ...rest);
};`)}`;
