-- Apache Traffic Server's ts_lua (tslua.so as a remap plugin): every
-- request is intercepted and answered from Lua.  t_svc_trafficserver
-- checks the lines of render and fib.
local function fib(n)
  if n < 2 then return n end
  return fib(n - 1) + fib(n - 2)
end
local function render()
  return tostring(fib(20))
end
function send_response()
  local body = render()
  ts.say('HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\nContent-Length: ' ..
         #body .. '\r\n\r\n' .. body)
end
function do_remap()
  ts.http.intercept(send_response)
  return 0
end
