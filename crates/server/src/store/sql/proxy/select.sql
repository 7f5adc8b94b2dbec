select session_id, message_count, digest, session_version from proxy_heads where tenant_id = $1 and key = $2
