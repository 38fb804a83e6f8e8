-- pgarena's script mix test: script b logs that it ran.
\set r random(1, 1000)
INSERT INTO mix (client, script, r) VALUES (:client_id, 'b', :r);
