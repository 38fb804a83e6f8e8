-- pgarena's script mix test: script a logs that it ran.
\set r random(1, 1000)
INSERT INTO mix (client, script, r) VALUES (:client_id, 'a', :r);
