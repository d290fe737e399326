-- wrk: POST the message in $MSG to rspamd's /checkv2.
local f = assert(io.open(os.getenv('MSG'), 'rb'))
wrk.method = 'POST'
wrk.body = f:read('*a')
f:close()
