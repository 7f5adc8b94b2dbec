select session_id, message_count, digest from proxy_heads where tenant_id = $1 and key = $2
