-- content_by_lua_file of t_svc_nginx: each request runs this chunk.
-- The functions are defined here, so the report names them by their
-- definitions (this chunk creates them): render calls the recursion
-- fib, checksum is a local function, cleanup a local one too.
local function fib(n)
	if n < 2 then return n end
	return fib(n - 1) + fib(n - 2)
end

local function render(n)
	local t = {}
	for i = 1, n do
		t[#t + 1] = tostring(fib(14) + i)
	end
	return table.concat(t, ",")
end

local function checksum(s)
	local h = 0
	for i = 1, #s do
		h = (h * 31 + s:byte(i)) % 2147483647
	end
	return h
end

local body = render(6)
ngx.say(body, " ", checksum(body))
